// Parameter servers on thread ranks: BSP trains exactly like one process on the global batch; SSP
// keeps the fast worker within `staleness` steps of the slow one, loses no push, and still learns.
#include <gtest/gtest.h>

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <chrono>
#include <mutex>
#include <thread>

#include <ATen/ATen.h>

#include "balancenet/core/Error.h"
#include "balancenet/emulation/StragglerSync.h"
#include "balancenet/orchestrator/StaticAllocator.h"
#include "balancenet/ps/ParameterServer.h"
#include "balancenet/ps/PsGroup.h"
#include "balancenet/ps/PsWorkerSync.h"
#include "testing/DistributedTraining.h"
#include "testing/FloatBound.h"
#include "testing/ReferenceTraining.h"
#include "testing/SyntheticData.h"
#include "testing/ThreadRanks.h"

namespace balancenet {
namespace {

constexpr std::chrono::seconds kTimeout{30};

// K parameter servers on threads, serving the workers that meet over `store`.
class ServerThreads {
 public:
  ServerThreads(c10::intrusive_ptr<c10d::Store> store, int workers, int servers, int64_t totalElements,
                ps::ServerOptions options)
      : reports_(servers) {
    const auto shards = ps::layoutShards(totalElements, servers);
    for (int k = 0; k < servers; ++k)
      threads_.emplace_back([=] {
        try {
          auto group = ps::joinPsGroup(store, ps::serverRank(workers, k), workers, servers, kTimeout);
          ps::ServerOptions mine = options;
          mine.workers = workers;
          mine.index = k;
          mine.shard = shards[k];
          ps::ParameterServer server(*group, mine);
          reports_[k] = server.run();
        } catch (...) {
          std::lock_guard<std::mutex> lock(mutex_);
          if (!error_) error_ = std::current_exception();
        }
      });
  }
  std::vector<ps::ServerReport> join() {
    for (auto& t : threads_) t.join();
    if (error_) std::rethrow_exception(error_);
    return reports_;
  }

 private:
  std::vector<ps::ServerReport> reports_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::exception_ptr error_;
};

std::unique_ptr<comm::GradientSync> workerSync(comm::Communicator& workers, comm::ParameterList params, int servers,
                                               int staleness) {
  auto group = ps::joinPsGroup(workers.sharedStore(), workers.rank(), workers.size(), servers, kTimeout);
  return std::make_unique<ps::PsWorkerSync>(std::move(group), std::move(params), workers.size(), staleness);
}

int64_t parameterCount(const models::ModelOptions& model) {
  int64_t n = 0;
  for (const auto& p : models::buildModel(model).net->parameters()) n += p.numel();
  return n;
}

// The model's training-set loss with the given parameters (rank 0's start ones when empty).
double trainingLoss(const models::ModelOptions& model, uint64_t seed, const testing::ImageSet& train,
                    const std::vector<at::Tensor>& params) {
  at::manual_seed(seed);
  auto built = models::buildModel(model);
  at::NoGradGuard noGrad;
  auto mine = built.net->parameters();
  for (size_t i = 0; i < params.size() && i < mine.size(); ++i) mine[i].copy_(params[i]);
  return at::cross_entropy_loss(built.net->forward(train.images), train.labels).item<double>();
}

struct BspCase {
  std::string name;
  std::string model;
  std::vector<int64_t> split;
  std::string optimizer;
  int servers;
};

class ParameterServerBsp : public ::testing::TestWithParam<BspCase> {};

TEST_P(ParameterServerBsp, UnequalSplitMatchesSingleProcess) {
  const BspCase& c = GetParam();
  const Split split{c.split};
  const auto train = testing::syntheticDataset(300, 3);
  const auto options = testing::comparisonOptions(c.optimizer, 5, split.total(), 5e-4);
  const auto model = testing::comparisonModel(c.model);
  auto store = c10::make_intrusive<c10d::HashStore>();
  ps::ServerOptions server;
  server.optimizer = options.optimizer;
  server.steps = options.steps;
  ServerThreads servers(store, split.worldSize(), c.servers, parameterCount(model), server);
  testing::DistributedRun run{split.worldSize(),
                              [&] { return std::make_unique<orchestrator::StaticAllocator>(split); }};
  run.store = store;
  run.sync = [&](comm::Communicator& comm, models::Network& net) {
    return workerSync(comm, comm::namedParameters(net), c.servers, 0);
  };
  auto dist = testing::distributedTraining(model, options, train, run);
  const auto reports = servers.join();
  auto ref = testing::referenceTraining(model, options, train);
  const double diff = testing::maxAbsDifference(dist, ref);
  const double bound = testing::exactnessBound(ref, options.steps);
  std::printf("[%s] %d servers, split %s: max |param difference| vs single process = %.3g (float bound %.3g)\n",
              c.name.c_str(), c.servers, split.str().c_str(), diff, bound);
  EXPECT_LT(diff, bound);
  for (const auto& r : reports) {
    EXPECT_EQ(r.pushes, options.steps * split.worldSize());
    EXPECT_EQ(r.largestClockGap, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Splits, ParameterServerBsp,
                         ::testing::Values(BspCase{"mlp_sgd_3w_2s", "mlp", {1, 40, 23}, "sgd", 2},
                                           BspCase{"cnn_adam_2w_3s", "cnn", {5, 27}, "adam", 3}),
                         [](const auto& info) { return info.param.name; });

// The protocol alone, with known gradients: BSP returns the summed scalars (the global loss) and the
// parameters after one SGD step on the summed gradient, on every worker.
// --grad-compress with --comm ps: each worker's push in the wire type with error feedback, the server's sum and update
// in float32. Unequal shares train as one float32 process within the wire type's bound (testing/FloatBound.cpp; int8
// takes bf16's eps, as in CompressedSyncTest), and ten times farther than the float32 pushes' run: they were
// compressed.
TEST(ParameterServer, CompressedPushesTrainAsOneProcessWithinTheWireTypesBound) {
  const Split split{{5, 27}};
  const auto train = testing::syntheticDataset(300, 3);
  const auto options = testing::comparisonOptions("sgd", 5, split.total(), 0.0);
  const auto model = testing::comparisonModel("mlp");
  const auto ref = testing::referenceTraining(model, options, train);
  auto notTrained = options;
  notTrained.steps = 0;
  const auto start = testing::referenceTraining(model, notTrained, train);
  double float32Diff = -1;
  for (const auto kind :
       {compression::GradCompression::None, compression::GradCompression::Bf16, compression::GradCompression::Int8}) {
    compression::CompressionOptions wire;
    wire.kind = kind;
    auto store = c10::make_intrusive<c10d::HashStore>();
    ps::ServerOptions server;
    server.optimizer = options.optimizer;
    server.steps = options.steps;
    server.compression = wire;
    ServerThreads servers(store, split.worldSize(), 2, parameterCount(model), server);
    testing::DistributedRun run{split.worldSize(),
                                [&] { return std::make_unique<orchestrator::StaticAllocator>(split); }};
    run.store = store;
    run.sync = [&](comm::Communicator& comm, models::Network& net) -> std::unique_ptr<comm::GradientSync> {
      auto group = ps::joinPsGroup(comm.sharedStore(), comm.rank(), comm.size(), 2, kTimeout);
      return std::make_unique<ps::PsWorkerSync>(std::move(group), comm::namedParameters(net), comm.size(), 0, wire);
    };
    const auto dist = testing::distributedTraining(model, options, train, run);
    servers.join();
    const double diff = testing::maxAbsDifference(dist, ref);
    const double bound = testing::mixedPrecisionBound(ref, start, 0x1p-7);
    std::printf("[ps %s] split %s: max |param difference| vs one fp32 process = %.3g (bound %.3g)\n",
                compression::gradCompressionName(kind), split.str().c_str(), diff, bound);
    if (kind == compression::GradCompression::None) {
      EXPECT_LT(diff, testing::exactnessBound(ref, options.steps));
      float32Diff = diff;
      continue;
    }
    EXPECT_LT(diff, bound) << compression::gradCompressionName(kind);
    EXPECT_GT(diff, 10 * float32Diff) << compression::gradCompressionName(kind);
  }
}

TEST(ParameterServer, BspSumsGradientsAndScalars) {
  constexpr int kWorkers = 3, kServers = 2;
  constexpr double kLr = 0.5;
  auto store = c10::make_intrusive<c10d::HashStore>();
  ps::ServerOptions server;
  server.optimizer.momentum = 0;
  server.steps = 1;
  ServerThreads servers(store, kWorkers, kServers, 7, server);
  std::vector<std::vector<at::Tensor>> params(kWorkers);
  std::vector<double> losses(kWorkers);
  testing::runRanks(
      kWorkers,
      [&](comm::Communicator& comm) {
        const int r = comm.rank();
        comm::ParameterList list{{"a.weight", at::ones({2, 2})}, {"b.bias", at::ones({3})}};
        auto sync = workerSync(comm, list, kServers, 0);
        std::vector<at::Tensor> grads{at::full({2, 2}, r + 1.0), at::full({3}, 10.0 * (r + 1))};
        auto scalars = at::full({1}, r + 1.0, at::kFloat);
        const auto stats = sync->synchronize(grads, scalars, {0, 1, 0, {}, kLr, nullptr});
        EXPECT_TRUE(sync->updatesParameters());
        EXPECT_EQ(stats.layers.size(), 2u);
        EXPECT_EQ(stats.layers[0].method, "ps");
        EXPECT_EQ(stats.layers[0].bytesSent, 16);
        EXPECT_GT(stats.bytesReceived, 7 * 4);
        // A push and a pull, every server's at once; rank 0 first sends each server the start parameters.
        EXPECT_EQ(stats.phases, r == 0 ? 2 + kServers : 2);
        params[r] = {list[0].tensor.clone(), list[1].tensor.clone()};
        losses[r] = scalars.item<double>();
      },
      store);
  servers.join();
  for (int r = 0; r < kWorkers; ++r) {
    EXPECT_DOUBLE_EQ(losses[r], 6.0) << "rank " << r;
    EXPECT_TRUE(at::allclose(params[r][0], at::full({2, 2}, 1 - kLr * 6))) << params[r][0];
    EXPECT_TRUE(at::allclose(params[r][1], at::full({3}, 1 - kLr * 60))) << params[r][1];
  }
}

// SSP with plain SGD adds every push's update: after the run each worker holds p0 - lr * (all pushes),
// whatever the interleaving. Worker 1 sleeps every step; worker 0 must never lead by more than s.
TEST(ParameterServer, SspBoundsTheLeadAndLosesNoPush) {
  constexpr int kWorkers = 2, kServers = 2, kStaleness = 2, kSteps = 10;
  auto store = c10::make_intrusive<c10d::HashStore>();
  ps::ServerOptions server;
  server.optimizer.momentum = 0;
  server.staleness = kStaleness;
  server.steps = kSteps;
  ServerThreads servers(store, kWorkers, kServers, 5, server);
  std::vector<int64_t> gaps(kWorkers);
  std::vector<at::Tensor> finals(kWorkers);
  testing::runRanks(
      kWorkers,
      [&](comm::Communicator& comm) {
        const int r = comm.rank();
        comm::ParameterList list{{"w", at::zeros({5})}};
        auto sync = workerSync(comm, list, kServers, kStaleness);
        auto* worker = dynamic_cast<ps::PsWorkerSync*>(sync.get());
        for (int64_t step = 0; step < kSteps; ++step) {
          if (r == 1) std::this_thread::sleep_for(std::chrono::milliseconds(30));
          std::vector<at::Tensor> grads{at::full({5}, r + 1.0)};
          auto scalars = at::zeros({1});
          sync->synchronize(grads, scalars, {step, 1, 0, {1, 1}, 0.1, nullptr});
        }
        gaps[r] = worker->largestClockGap();
        finals[r] = list[0].tensor.clone();
      },
      store);
  const auto reports = servers.join();
  std::printf("SSP staleness %d: worker 0 led by up to %lld step(s), worker 1 by %lld; servers saw %lld and %lld\n",
              kStaleness, static_cast<long long>(gaps[0]), static_cast<long long>(gaps[1]),
              static_cast<long long>(reports[0].largestClockGap), static_cast<long long>(reports[1].largestClockGap));
  EXPECT_EQ(gaps[0], kStaleness);  // reached, never exceeded
  EXPECT_EQ(gaps[1], 0);
  for (const auto& r : reports) {
    EXPECT_EQ(r.largestClockGap, kStaleness);
    EXPECT_EQ(r.pushes, kWorkers * kSteps);
  }
  for (int r = 0; r < kWorkers; ++r)
    EXPECT_TRUE(at::allclose(finals[r], at::full({5}, -0.1 * kSteps * 3))) << "rank " << r << ": " << finals[r];
}

// SSP training with a model, a slow worker and momentum: everyone ends on the same parameters after the
// same number of steps, the fast worker's lead stayed within the bound, and the loss went down.
TEST(ParameterServer, SspTrainingWithSlowWorkerLearns) {
  constexpr int kServers = 2, kStaleness = 2;
  const Split split{{16, 16}};
  const auto train = testing::syntheticDataset(300, 3);
  const auto options = testing::comparisonOptions("sgd", 16, split.total(), 5e-4);
  const auto model = testing::comparisonModel("mlp");
  auto store = c10::make_intrusive<c10d::HashStore>();
  ps::ServerOptions server;
  server.optimizer = options.optimizer;
  server.staleness = kStaleness;
  server.steps = options.steps;
  ServerThreads servers(store, 2, kServers, parameterCount(model), server);
  // Worker 1 is 10 times slower than its real compute; worker 0 runs free.
  const auto slowdown = emulation::FactorSchedule::parse("--slowdown", "1,10", "--slowdown-schedule", "", 2);
  testing::DistributedRun run{2, [&] { return std::make_unique<orchestrator::StaticAllocator>(split); }};
  run.store = store;
  run.sync = [&](comm::Communicator& comm, models::Network& net) -> std::unique_ptr<comm::GradientSync> {
    return std::make_unique<emulation::StragglerSync>(
        workerSync(comm, comm::namedParameters(net), kServers, kStaleness), emulation::StragglerSync::Mode::Relative,
        slowdown, comm.rank());
  };
  auto dist = testing::distributedTraining(model, options, train, run);  // fails if ranks disagree
  const auto reports = servers.join();
  const double before = trainingLoss(model, options.seed, train, {});
  const double after = trainingLoss(model, options.seed, train, dist);
  std::printf("SSP training: loss %.4f -> %.4f; largest lead %lld step(s) (bound %d)\n", before, after,
              static_cast<long long>(reports[0].largestClockGap), kStaleness);
  EXPECT_LT(after, before * 0.9);
  for (const auto& r : reports) {
    EXPECT_LE(r.largestClockGap, kStaleness);
    EXPECT_GT(r.largestClockGap, 0);  // the slow worker really made the fast one wait ahead
    EXPECT_EQ(r.pushes, 2 * options.steps);
  }
}

// A server that goes away (its group closed, as when its process dies) must fail the workers' step with
// a RuntimeFailure, not leave them waiting.
TEST(ParameterServer, VanishedServerFailsTheStepInsteadOfHanging) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::thread server([&] {
    auto group = ps::joinPsGroup(store, ps::serverRank(1, 0), 1, 1, kTimeout);
    store->wait({"worker joined"});  // leave after the worker's side of the group is complete, not during it
  });
  const auto start = std::chrono::steady_clock::now();
  auto worker = [&](comm::Communicator& comm) {
    comm::ParameterList list{{"w", at::zeros({4})}};
    auto sync = workerSync(comm, list, 1, 0);
    store->set("worker joined", std::vector<uint8_t>{1});
    std::vector<at::Tensor> grads{at::ones({4})};
    auto scalars = at::zeros({1});
    try {
      sync->synchronize(grads, scalars, {0, 1, 0, {1}, 0.1, nullptr});
      ADD_FAILURE() << "the step succeeded without its server";
    } catch (const RuntimeFailure& e) {
      EXPECT_NE(std::string(e.what()).find("lost parameter server 0 at step 0"), std::string::npos) << e.what();
    }
  };
  try {
    testing::runRanks(1, worker, store);
  } catch (...) {
    store->set("worker joined", std::vector<uint8_t>{1});  // let the server thread end before the test fails
    server.join();
    throw;
  }
  server.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("a vanished server failed the worker's step after %.2f s\n", seconds);
  EXPECT_LT(seconds, 10);
}

}  // namespace
}  // namespace balancenet
