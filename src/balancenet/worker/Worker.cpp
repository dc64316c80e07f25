// Wiring of one worker: this is where strategies (allocator, gradient sync, batch norm) are chosen.
#include "balancenet/worker/Worker.h"

#include <ATen/Parallel.h>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "balancenet/comm/GroupPrefixes.h"
#include "balancenet/comm/HostAddress.h"
#include "balancenet/comm/Rendezvous.h"
#include "balancenet/comm/SyncBatchNorm.h"
#include "balancenet/comm/group/GpuGroup.h"
#include "balancenet/compression/GradCompression.h"
#include "balancenet/core/MemoryReuse.h"
#include "balancenet/device/GpuSupport.h"
#include "balancenet/elastic/ElasticAgent.h"
#include "balancenet/elastic/FaultInjection.h"
#include "balancenet/emulation/FactorSchedule.h"
#include "balancenet/federated/process/FederateProcess.h"
#include "balancenet/job/JobRendezvous.h"
#include "balancenet/metrics/GemmProbe.h"
#include "balancenet/recompute/RecomputeMode.h"
#include "balancenet/trainer/RunLoop.h"
#include "balancenet/worker/Checkpointing.h"
#include "balancenet/worker/GenerationConfig.h"
#include "balancenet/worker/GroupWiring.h"
#include "balancenet/worker/SyncFactory.h"
#include "balancenet/worker/WorkerMemory.h"
#include "balancenet/worker/WorkerSetup.h"
#include "balancenet/worker/WorkerThreads.h"

namespace balancenet::worker {
using job::JobConfig;
using job::rendezvousOptions;
namespace {

// Everything that hangs on one process group; built at start and again after a membership change.
// The SyncBatchNorm layers and the allocator the trainer and the checkpoint writer use are the group's:
// nothing outside keeps a pointer to a group that a re-form drops.
class WorkerGroup : public elastic::GroupParts {
 public:
  // profile: this worker's device, GEMM prior and the largest share its memory holds (WorkerPasses).
  WorkerGroup(const JobConfig& c, const comm::RendezvousOptions& rv, models::BuiltModel& model,
              const ProcessProfile& profile)
      : config_(c), rv_(rv), model_(model), device_(profile.device), wiring_(c, rv, profile) {}
  ~WorkerGroup() override { release(); }

  void build(std::unique_ptr<comm::Communicator> comm, const elastic::Generation& generation) {
    const JobConfig c = forMembers(config_, generation.members);
    comm_ = std::move(comm);
    comm::attachGpuGroup(*comm_, device_, c.device, rv_.opTimeout());
    comm::useGroupForSyncBatchNorm(*model_.net, comm_.get());
    wiring_.startMonitor(*comm_);
    wiring_.makeAllocator(generation, workers_, model_.info);
    installLinkEmulation(*comm_, c.emulation);
    sync_ = makeGradientSync(*comm_, *model_.net, c);
    // The residuals are the old group's sums' and are not in the committed state: the new group starts without.
    if (generation.number > 0 && compression::compresses(c.comm.compression) && comm_->rank() == 0)
      spdlog::info("--grad-compress: the error feedback starts again from zero in the re-formed group");
    workers_ = static_cast<int>(generation.members.size());
  }

  void release() override {
    wiring_.stopMonitor();
    sync_.reset();  // its autograd hooks go with it
    wiring_.release();
    comm::useGroupForSyncBatchNorm(*model_.net, nullptr);
    comm_.reset();
  }

  void rebuild(trainer::Trainer& trainer, std::unique_ptr<comm::Communicator> comm,
               const elastic::Generation& generation) override {
    release();
    build(std::move(comm), generation);
    trainer.rewire(*comm_, *sync_, wiring_.allocator(), stateSlicesFor(generation));
  }

  // --shard-state's slices over `generation`'s members, by their caps (none without --shard-state).
  std::vector<int64_t> stateSlicesFor(const elastic::Generation& generation) const {
    if (!config_.trainer.shardState) return {};
    const auto slices =
        stateSlicesOf(forMembers(config_, generation.members), model_.info.parameters, generation.members.size());
    if (comm_->rank() == 0)
      spdlog::info("--shard-state: the optimiser state of {} parameters in slices of {} (by --memory-limit-mb)",
                   model_.info.parameters, fmt::join(slices, ", "));
    return slices;
  }

  comm::Communicator& comm() { return *comm_; }
  comm::GradientSync& sync() { return *sync_; }
  orchestrator::Allocator& allocator() { return wiring_.allocator(); }
  void stopMonitor() { wiring_.stopMonitor(); }

 private:
  const JobConfig& config_;
  const comm::RendezvousOptions& rv_;
  models::BuiltModel& model_;
  const c10::Device device_;                  // where this worker computes (the model is there)
  int workers_ = 0;                           // in the group built last; 0: none yet
  std::unique_ptr<comm::Communicator> comm_;  // declared before the wiring, which is released first
  GroupWiring wiring_;
  std::unique_ptr<comm::GradientSync> sync_;
};

elastic::ElasticOptions elasticOptions(const JobConfig& c) {
  const auto& r = c.resilience;
  elastic::ElasticOptions o;
  o.elastic = r.elastic;
  o.minNodes = r.minNodes;
  o.maxNodes = r.maxNodes;
  o.globalBatch = c.trainer.globalBatch;
  o.peerTimeout = r.peerTimeout;
  o.joinTimeout = c.launch.rendezvousTimeout;
  o.host = comm::hostAddress(rendezvousOptions(c));
  return o;
}

// This worker's way into the job: the group and the state it starts from (empty: the job's own start).
struct JobEntry {
  c10::intrusive_ptr<c10d::Store> store;
  int member = 0;
  std::unique_ptr<comm::Communicator> comm;  // null for a joiner until it is admitted
  std::string joinState;
};

// The launched workers meet in generation 0; a joiner only connects to the store and waits there.
JobEntry connectToJob(const JobConfig& c, const comm::RendezvousOptions& rv) {
  JobEntry entry;
  if (c.worker->joining) {
    entry.store = comm::connectJobStore(rv);
  } else {
    entry.comm = comm::rendezvous(rv);
    entry.store = entry.comm->sharedStore();
  }
  entry.member = c.worker->rank >= 0 ? c.worker->rank : elastic::Membership(entry.store, rv.opTimeout()).newMemberId();
  return entry;
}

// Generation 0 for a launched worker; a joiner waits for its admission. False: the job finished first.
bool enterFirstGeneration(const JobConfig& c, elastic::ElasticAgent& agent, JobEntry& entry) {
  if (!c.worker->joining) {
    agent.startLaunched(c.worker->worldSize);
    return true;
  }
  spdlog::info("rank {} asks to join the job", entry.member);
  entry.comm = agent.join(entry.joinState);
  if (!entry.comm) spdlog::info("rank {}: the job finished before this worker could join", entry.member);
  return entry.comm != nullptr;
}

void explainGradientSync(const JobConfig& c, WorkerGroup& group) {
  if (group.comm().rank() != 0 || !c.comm.explain) return;
  auto text = group.sync().explain();
  while (!text.empty() && text.back() == '\n') text.pop_back();
  spdlog::info("gradient synchronisation:\n{}", text);
}

// The trainer and the step boundaries the run loop calls, which must outlive it.
struct WiredTrainer {
  std::unique_ptr<trainer::StepBoundary> fault;
  std::unique_ptr<trainer::Trainer> trainer;
  std::vector<trainer::StepBoundary*> boundaries;
  trainer::TrainerOptions options;  // the run loop's too
};

// Wires the trainer to the group and starts it from its state: a checkpoint (--resume), the state a
// joiner received, or the launched model. Boundaries run in this order after each step: the checkpoint
// (collective), membership (it may re-form the group, so nothing collective follows it), a fault.
WiredTrainer wireTrainer(const JobConfig& c, models::BuiltModel& model, const TrainingData& data, WorkerGroup& group,
                         elastic::ElasticAgent& agent, WorkerCheckpoints& checkpoints, const JobEntry& entry,
                         const metrics::GemmPeak& peak, const WorkerPasses& passes) {
  const bool joining = c.worker->joining;
  WiredTrainer wired;
  // A restarted worker must not repeat its first incarnation's injected fault.
  if (!joining) wired.fault = elastic::faultFromEnvironment(entry.member);
  auto& options = wired.options;
  options = c.trainer;
  options.broadcastInitialModel = !joining;  // a joiner's model arrives with the state
  options.samplesPerPass = passes.samplesPerPass;
  options.recomputeBlocks = passes.recompute;
  options.stateSlices = group.stateSlicesFor(agent.generation());
  options.capacity = {peak, c.threads, static_cast<double>(model.info.flopsPerSample)};
  options.metricStyle = data.objective.metricStyle();
  trainer::TrainerParts parts{*model.net,   *data.train,  data.test.get(),  data.objective,
                              group.comm(), group.sync(), group.allocator()};
  checkpoints.addTo(wired.boundaries);
  wired.boundaries.push_back(&agent);
  if (wired.fault) wired.boundaries.push_back(wired.fault.get());
  wired.trainer = std::make_unique<trainer::Trainer>(options, parts);
  if (joining)
    wired.trainer->restoreState(trainer::fromBytes(entry.joinState));
  else
    checkpoints.resumeIfAsked(*wired.trainer);
  agent.attach(*wired.trainer, group, [&checkpoints] { return checkpoints.newestState(); });
  return wired;
}

}  // namespace

int runWorker(const JobConfig& c) {
  if (c.federated) return federated::runFederatedProcess(c);
  if (c.pipeline.enabled()) return runPipelineWorker(c);
  // Before any model or probe: they are built where this worker computes.
  const c10::Device device = device::prepareDevice(c.device, c.worker->localRank);
  applyWorkerThreads(c);
  // Before the others' traffic: ~0.1 s at start-up. A GPU worker's is its GPU's.
  const auto& peak = metrics::processGemmPeak(device);
  if (!keepFreedMemory()) spdlog::debug("malloc settings from the environment kept (GLIBC_TUNABLES / MALLOC_*)");
  const comm::RendezvousOptions rv = rendezvousOptions(c);

  JobEntry entry = connectToJob(c, rv);
  elastic::ElasticAgent agent(elasticOptions(c), entry.store, entry.member,
                              [&rv](const c10::intrusive_ptr<c10d::Store>& scoped, int rank, int size) {
                                return comm::joinGroup(scoped, rank, size, rv.opTimeout(), rv.glooHost(), rv.iface,
                                                       rv.glooThreads);
                              });
  if (!enterFirstGeneration(c, agent, entry)) return 0;

  const TrainingData data = loadTrainingData(c);
  auto model = buildWorkerModel(c, data.train->spec(), /*announce=*/entry.comm->rank() == 0 && !c.worker->joining);
  if (device.is_cuda()) {
    model.net->to(device);
    spdlog::info("rank {} trains on {}", entry.comm->rank(), device::describeDevice(device));
  }
  const WorkerPasses passes = workerPasses(c, entry.member, model, device);
  if (c.trainer.accumulate == trainer::kAccumulateAuto && passes.samplesPerPass != memory::kUnlimited)
    spdlog::debug("worker {}: at most {} samples a pass (--accumulate auto)", entry.member, passes.samplesPerPass);
  if (passes.recompute)
    spdlog::info("worker {} recomputes its blocks in backward (--recompute {}){}", entry.member,
                 recompute::recomputeModeName(c.trainer.recompute),
                 passes.samplesPerPass == memory::kUnlimited
                     ? std::string()
                     : fmt::format(": a pass holds {} samples, {} without", passes.samplesPerPass,
                                   passes.samplesPerPassWithout));
  ProcessProfile profile{device, processGemmFlops(device), passes.shareCap};
  profile.emptyShares = true;  // the Trainer runs a left-out step (a probe, the sum back)
  WorkerGroup group(c, rv, model, profile);
  group.build(std::move(entry.comm), agent.generation());
  explainGradientSync(c, group);

  WorkerCheckpoints checkpoints(c, group.comm(), *model.net);
  auto wired = wireTrainer(c, model, data, group, agent, checkpoints, entry, peak, passes);
  const auto summary = trainer::RunLoop(wired.options, {*wired.trainer, wired.boundaries, &agent}).run();
  agent.finish();

  writeModelOutputs(c, *model.net, wired.trainer->parameters(), wired.trainer->world().rank(), summary,
                    wired.options.metricStyle);
  group.stopMonitor();
  group.comm().barrier();  // rank 0 may serve the store: nobody leaves while others still need it
  return 0;
}

}  // namespace balancenet::worker
