// Wiring of one worker: this is where strategies (allocator, gradient sync, batch norm) are chosen.
#include "balancenet/launcher/Worker.h"

#include <ATen/Parallel.h>
#include <torch/serialize.h>

#include <sstream>

#include <spdlog/spdlog.h>

#include "balancenet/comm/FactorLinear.h"
#include "balancenet/comm/Rendezvous.h"
#include "balancenet/comm/SyncBatchNorm.h"
#include "balancenet/core/AtomicFile.h"
#include "balancenet/core/IntraOpThreads.h"
#include "balancenet/core/MemoryReuse.h"
#include "balancenet/data/MnistDataset.h"
#include "balancenet/elastic/ElasticAgent.h"
#include "balancenet/elastic/FaultInjection.h"
#include "balancenet/emulation/FactorSchedule.h"
#include "balancenet/launcher/Checkpointing.h"
#include "balancenet/launcher/JobRendezvous.h"
#include "balancenet/launcher/SyncFactory.h"
#include "balancenet/metrics/GemmProbe.h"
#include "balancenet/models/StateDictExport.h"
#include "balancenet/monitor/NodeMonitor.h"
#include "balancenet/orchestrator/Orchestrator.h"
#include "balancenet/orchestrator/StaticAllocator.h"
#include "balancenet/orchestrator/policies/PolicyRegistry.h"

namespace balancenet::launcher {
namespace {

std::unique_ptr<orchestrator::Allocator> makeAllocator(const JobConfig& c, comm::Communicator& comm,
                                                       const models::ModelInfo& model,
                                                       orchestrator::NodeSampler sampler) {
  // The orchestrator's periodic gather is a barrier, which SSP exists to avoid: a fixed split instead.
  if (c.comm.staleness > 0) return std::make_unique<orchestrator::StaticAllocator>(c.split);
  orchestrator::PolicyOptions policy;
  policy.name = c.orchestration.policy;
  policy.seed = c.trainer.seed;
  policy.staticSplit = c.split;
  policy.bnoNormalize = c.orchestration.bnoNormalize;
  orchestrator::OrchestratorOptions options;
  options.rebalanceEvery = c.orchestration.rebalanceEvery;
  options.globalBatch = c.trainer.globalBatch;
  options.flopsPerSample = static_cast<double>(model.flopsPerSample);
  options.memoryPerSampleBytes = static_cast<double>(model.memoryPerSampleBytes);
  options.runDir = c.trainer.runDir;
  return std::make_unique<orchestrator::Orchestrator>(orchestrator::makePolicy(policy), c.split, comm,
                                                      std::move(sampler), options);
}

// The job's configuration as one generation of it sees it: after a membership change the global batch
// is split equally over the new world (the orchestrator re-balances from there), and the emulated
// node speeds stay with the workers they were given to, whatever their new rank.
JobConfig forMembers(const JobConfig& c, const std::vector<int>& members) {
  bool launched = static_cast<int>(members.size()) == c.split.worldSize();
  for (size_t r = 0; launched && r < members.size(); ++r) launched = members[r] == static_cast<int>(r);
  if (launched) return c;
  JobConfig g = c;
  g.split = Split::equal(c.trainer.globalBatch, static_cast<int>(members.size()));
  g.emulation.slowdown = c.emulation.slowdown.forNodes(members);
  g.emulation.nodeSpeed = c.emulation.nodeSpeed.forNodes(members);
  g.emulation.netDelayMs = emulation::FactorSchedule::pick(c.emulation.netDelayMs, members);
  g.emulation.netBandwidthMbps = emulation::FactorSchedule::pick(c.emulation.netBandwidthMbps, members);
  return g;
}

// Everything that hangs on one process group; built at start and again after a membership change.
class WorkerGroup : public elastic::GroupParts {
 public:
  WorkerGroup(const JobConfig& c, const comm::RendezvousOptions& rv, models::BuiltModel& model)
      : config_(c), rv_(rv), model_(model), gemmFlops_(metrics::measureGemmFlops()) {}
  ~WorkerGroup() override { release(); }

  void build(std::unique_ptr<comm::Communicator> comm, const std::vector<int>& members) {
    const JobConfig c = forMembers(config_, members);
    comm_ = std::move(comm);
    // Live node metrics on their own thread and their own group, so training never waits for them.
    monitor_ = std::make_unique<monitor::NodeMonitor>(comm::sideGroup(*comm_, "probe", rv_));
    auto sampler = [monitor = monitor_.get(), gemmFlops = gemmFlops_] {
      const auto snap = monitor->snapshot();
      return orchestrator::NodeSample{snap.residentBytes, snap.memoryTotalBytes, snap.memoryAvailableBytes,
                                      snap.latencyMs, snap.bandwidthBytesPerSecond, gemmFlops};
    };
    allocator_ = makeAllocator(c, *comm_, model_.info, sampler);
    installLinkEmulation(*comm_, c.emulation);
    sync_ = makeGradientSync(*comm_, *model_.net, c);
  }

  void release() override {
    if (monitor_) monitor_->stop();
    sync_.reset();  // its autograd hooks go with it
    allocator_.reset();
    monitor_.reset();
    comm_.reset();
  }

  void rebuild(trainer::Trainer& trainer, std::unique_ptr<comm::Communicator> comm,
               const elastic::Generation& generation) override {
    release();
    build(std::move(comm), generation.members);
    trainer.rewire(*comm_, *sync_, *allocator_);
  }

  comm::Communicator& comm() { return *comm_; }
  comm::GradientSync& sync() { return *sync_; }
  orchestrator::Allocator& allocator() { return *allocator_; }
  void stopMonitor() { monitor_->stop(); }

 private:
  const JobConfig& config_;
  const comm::RendezvousOptions& rv_;
  models::BuiltModel& model_;
  const double gemmFlops_;
  std::unique_ptr<comm::Communicator> comm_;
  std::unique_ptr<monitor::NodeMonitor> monitor_;
  std::unique_ptr<orchestrator::Allocator> allocator_;
  std::unique_ptr<comm::GradientSync> sync_;
};

elastic::ElasticOptions elasticOptions(const ResilienceOptions& r, const LaunchOptions& launch) {
  elastic::ElasticOptions o;
  o.elastic = r.elastic;
  o.minNodes = r.minNodes;
  o.maxNodes = r.maxNodes;
  o.peerTimeout = r.peerTimeout;
  o.joinTimeout = launch.rendezvousTimeout;
  return o;
}

}  // namespace

int runWorker(const JobConfig& c) {
  const auto& id = *c.worker;
  setIntraOpThreads(c.threads);
  const auto peak = metrics::measureGemmPeak();  // before the others' traffic: ~0.1 s at start-up
  if (!keepFreedMemory()) spdlog::debug("malloc settings from the environment kept (GLIBC_TUNABLES / MALLOC_*)");

  const comm::RendezvousOptions rv = rendezvousOptions(c);

  // The launched workers meet in generation 0; a joiner only connects to the store and waits there.
  std::unique_ptr<comm::Communicator> comm;
  c10::intrusive_ptr<c10d::Store> jobStore;
  if (id.joining) {
    jobStore = comm::connectJobStore(rv);
  } else {
    comm = comm::rendezvous(rv);
    jobStore = comm->sharedStore();
  }
  const int member = id.rank >= 0 ? id.rank : elastic::Membership(jobStore, rv.opTimeout()).newMemberId();
  elastic::ElasticAgent agent(elasticOptions(c.resilience, c.launch), jobStore, member,
                              [&rv](const c10::intrusive_ptr<c10d::Store>& scoped, int rank, int size) {
                                return comm::joinGroup(scoped, rank, size, rv.opTimeout(), rv.glooHost(), rv.iface);
                              });
  std::string joinState;
  if (id.joining) {
    spdlog::info("rank {} asks to join the job", member);
    comm = agent.join(joinState);
    if (!comm) {
      spdlog::info("rank {}: the job finished before this worker could join", member);
      return 0;
    }
  } else {
    agent.startLaunched(id.worldSize);
  }

  auto train = data::loadMnist(c.dataDir, /*train=*/true);
  auto test = data::loadMnist(c.dataDir, /*train=*/false);
  data::requireModelImageSize(train, c.dataDir);
  data::requireModelImageSize(test, c.dataDir);

  models::ModelOptions modelOptions = c.model;
  comm::Communicator* launchedGroup = comm.get();  // --sync-bn excludes --elastic: this group stays
  if (c.syncBatchNorm)
    modelOptions.batchNorm = [launchedGroup](int64_t channels) {
      return torch::nn::AnyModule(comm::SyncBatchNorm2d(channels, launchedGroup));
    };
  if (capturesFactors(c.comm)) modelOptions.linear = comm::factorLinearFactory();
  at::manual_seed(c.trainer.seed);
  auto model = models::buildModel(modelOptions);
  if (comm->rank() == 0 && !id.joining)
    spdlog::info("model {} (width {}): {} parameters, {:.2f} MFLOPs/sample; {} workers, split {}", c.model.name,
                 c.model.width, model.info.parameters, model.info.flopsPerSample / 1e6, id.worldSize, c.split.str());

  WorkerGroup group(c, rv, model);
  group.build(std::move(comm), agent.generation().members);
  if (group.comm().rank() == 0 && c.comm.explain) {
    auto text = group.sync().explain();
    while (!text.empty() && text.back() == '\n') text.pop_back();
    spdlog::info("gradient synchronisation:\n{}", text);
  }
  // --checkpoint-dir excludes --elastic (CommandLine): the group these refer to is never rebuilt.
  WorkerCheckpoints checkpoints(c, group.comm(), *model.net, group.allocator());
  auto options = c.trainer;
  options.broadcastInitialModel = !id.joining;  // a joiner's model arrives with the state
  options.capacity = {peak, c.threads, static_cast<double>(model.info.flopsPerSample)};
  // A restarted worker must not repeat its first incarnation's injected fault.
  auto fault = id.joining ? nullptr : elastic::faultFromEnvironment(member);
  std::vector<trainer::StepBoundary*> boundaries{&agent};
  if (fault) boundaries.push_back(fault.get());
  trainer::TrainerParts parts{*model.net, train, &test, group.comm(), group.sync(), group.allocator(), boundaries,
                              &agent};
  checkpoints.addTo(parts);
  trainer::Trainer trainer(options, parts);
  checkpoints.resumeIfAsked(trainer);
  if (id.joining) trainer.restoreState(trainer::fromBytes(joinState));
  agent.attach(trainer, group);
  auto summary = trainer.run();
  agent.finish();
  const bool first = group.comm().rank() == 0;
  if (first && !c.exportPath.empty()) {
    models::exportStateDict(*model.net, c.exportPath);
    spdlog::info("state_dict written to {} (Python: model.load_state_dict(torch.load(path)))", c.exportPath);
  }
  if (first && !c.saveParams.empty()) {
    std::ostringstream out;
    torch::save(trainer.parameters(), out);
    writeFileAtomically(c.saveParams, out.str());
  }
  if (first && !summary.evals.empty())
    spdlog::info("final test accuracy {:.2f}% after {} steps, {:.1f} samples/s", 100 * summary.evals.back().accuracy,
                 summary.steps, summary.samplesPerSecond);
  group.stopMonitor();
  group.comm().barrier();  // rank 0 may serve the store: nobody leaves while others still need it
  return 0;
}

}  // namespace balancenet::launcher
