// An elastic re-form ends the dropped generation's GPU group before the next generation forms (ElasticAgent::recover
// over a worker's GroupParts), instead of leaving it to NCCL's destructor, which warns and ends it whenever the last
// reference goes. One member and no GPU: a recording stand-in is each generation's GPU group, beside real Gloo.
#include "balancenet/elastic/ElasticAgent.h"

#include <gtest/gtest.h>

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "balancenet/comm/FlatAllReduceSync.h"
#include "balancenet/comm/GroupPrefixes.h"
#include "balancenet/comm/group/GlooGroup.h"
#include "balancenet/core/Error.h"
#include "balancenet/orchestrator/StaticAllocator.h"
#include "testing/RecordingGpuGroup.h"
#include "testing/ReferenceTraining.h"
#include "testing/SmallRuns.h"
#include "testing/SyntheticData.h"

namespace balancenet::elastic {
namespace {

using namespace std::chrono_literals;

// What a worker hangs on its group, as worker/Worker.cpp's: dropped by release(), built again by rebuild().
class Parts : public GroupParts {
 public:
  explicit Parts(std::unique_ptr<comm::Communicator> comm) { build(std::move(comm)); }
  void release() override {
    sync_.reset();
    comm_.reset();
  }
  void rebuild(trainer::Trainer& trainer, std::unique_ptr<comm::Communicator> comm, const Generation&) override {
    release();
    build(std::move(comm));
    trainer.rewire(*comm_, *sync_, allocator_);
  }
  comm::Communicator& comm() { return *comm_; }
  comm::GradientSync& sync() { return *sync_; }
  orchestrator::Allocator& allocator() { return allocator_; }

 private:
  void build(std::unique_ptr<comm::Communicator> comm) {
    comm_ = std::move(comm);
    sync_ = std::make_unique<comm::FlatAllReduceSync>(*comm_);
  }
  std::unique_ptr<comm::Communicator> comm_;
  std::unique_ptr<comm::GradientSync> sync_;
  orchestrator::StaticAllocator allocator_{Split::equal(32, 1)};
};

TEST(ReformEndsGpuGroup, TheDroppedGenerationsGpuGroupIsEndedBeforeTheNextForms) {
  c10::intrusive_ptr<c10d::Store> store = c10::make_intrusive<c10d::HashStore>();
  std::vector<std::string> events;
  int generations = 0;
  // Each generation's group: Gloo with a GPU group beside it, as comm::attachGpuGroup gives an all-GPU group.
  Connect connect = [&](const c10::intrusive_ptr<c10d::Store>& scoped, int rank, int world) {
    const int number = generations++;
    events.push_back(fmt::format("generation {} forms", number));
    auto comm = comm::joinGroup(scoped, rank, world, 30s);
    comm->attachGpuGroup(c10::make_intrusive<testing::RecordingGpuGroup>(
        rank, world,
        [&events, number](const std::string& how) { events.push_back(fmt::format("{} {}", how, number)); }));
    return comm;
  };
  ElasticOptions options;
  options.elastic = true;
  options.peerTimeout = 10s;
  options.joinTimeout = 10s;
  ElasticAgent agent(options, store, /*member=*/0, connect);
  agent.startLaunched(1);
  Parts parts(connect(comm::scopedStore(comm::elasticGenerationPrefix(0), store), 0, 1));

  at::manual_seed(1);
  auto built = models::buildModel(testing::comparisonModel("mlp"));
  const auto train = testing::syntheticDataset(64, 3);
  trainer::Trainer trainer(testing::sgdRun(3, 32, 5), {*built.net, train, nullptr, testing::syntheticObjective(),
                                                       parts.comm(), parts.sync(), parts.allocator()});
  agent.attach(trainer, parts);
  trainer.step();
  agent.afterStep(trainer, 3);
  agent.recover(trainer, RuntimeFailure("all-reduce failed on rank 0 (a peer died or the network broke)"));

  EXPECT_EQ(agent.generation().number, 1);
  EXPECT_EQ(events, (std::vector<std::string>{"generation 0 forms", "abort 0", "generation 1 forms"}));
  trainer.step();  // on the new group
  EXPECT_EQ(trainer.stepsDone(), 2);
}

}  // namespace
}  // namespace balancenet::elastic
