// Wiring of one pipeline worker: its stage of the model, its groups, the split over the columns.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "balancenet/comm/Rendezvous.h"
#include "balancenet/core/MemoryReuse.h"
#include "balancenet/elastic/FaultInjection.h"
#include "balancenet/job/JobRendezvous.h"
#include "balancenet/pipeline/PipelineTrainer.h"
#include "balancenet/pipeline/planner/Repartitioner.h"
#include "balancenet/trainer/RunLoop.h"
#include "balancenet/worker/Checkpointing.h"
#include "balancenet/worker/GroupWiring.h"
#include "balancenet/worker/StagePlacement.h"
#include "balancenet/worker/SyncFactory.h"
#include "balancenet/worker/Worker.h"
#include "balancenet/worker/WorkerSetup.h"
#include "balancenet/worker/WorkerThreads.h"

namespace balancenet::worker {
using job::JobConfig;
using job::rendezvousOptions;
namespace {

// Rank 0 shows where the model was cut and which ranks run each stage: what a user checks first when one stage
// is slow.
void announceStages(const std::vector<models::BlockInfo>& blocks, const pipeline::Placement& placement,
                    const pipeline::Topology& topology, const JobConfig& c) {
  const auto& partition = placement.partition;
  spdlog::info("pipeline: {} stages x {} replica(s), schedule {}, {} micro-batches, partition {} ({}), split {}",
               topology.stages, topology.replicas, c.pipeline.schedule, microBatchesOf(c), partition.str(),
               c.pipeline.partition, c.split.str());
  for (int s = 0; s < partition.stageCount(); ++s) {
    const auto r = partition.stages[s];
    int64_t params = 0, flops = 0;
    for (size_t b = r.first; b < r.end; ++b) {
      params += blocks[b].parameters;
      flops += blocks[b].flopsPerSample;
    }
    spdlog::info("  stage {}: blocks {}-{} ({} .. {}), {} parameters, {:.2f} MFLOPs/sample, ranks {}", s, r.first,
                 r.end - 1, blocks[r.first].name, blocks[r.end - 1].name, params, flops / 1e6,
                 fmt::join(topology.stageRanks(s), ","));
  }
  if (c.pipeline.planned())
    spdlog::info("pipeline: planned placement {}, predicted {:.1f} ms/step", placement.describe(), placement.stepMs);
}

// A planned placement decides the stages after profiling, so every rank may become a column head; those
// measure the GEMM prior the allocator uses before others' traffic. 0 on the others.
double columnHeadGemmFlops(const JobConfig& config, bool planned) {
  const bool maybeFirstStage =
      planned ||
      pipeline::Topology::of(config.worker->worldSize, config.pipeline.stages).stageOf(config.worker->rank) == 0;
  return maybeFirstStage ? processGemmFlops(c10::Device(c10::DeviceType::CPU)) : 0.0;
}

// --explain-partition: the plan's costs and choice, as the planner puts them.
void explainPartition(const StagePlacement& placed) {
  auto text = pipeline::explainPlacement(*placed.profile, placed.placement);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  spdlog::info("partition:\n{}", text);
}

// Rank 0's, with a planned placement: compares the measured stage times with the plan and moves the cut
// (--keep-partition: only logs).
std::unique_ptr<pipeline::Repartitioner> makeRepartitioner(const JobConfig& c, const StagePlacement& placed,
                                                           const std::vector<models::BlockInfo>& blocks) {
  pipeline::RepartitionOptions options;
  options.every = c.orchestration.rebalanceEvery;
  options.live = !c.pipeline.keepPartition;
  const auto stages = placed.placement.stages;
  options.baselines = {pipeline::Partition::uniform(blocks.size(), stages),
                       pipeline::equalFlopsPartition(blocks, stages)};
  return std::make_unique<pipeline::Repartitioner>(*placed.profile, placed.placement, options);
}

// The job's trainer options with the pipeline's: schedule, micro-batches, the placed partition. The emulated
// slowdown reads `c`, which must outlive the trainer; `rank` is this worker's in `world`.
pipeline::PipelineTrainerOptions trainerOptions(const JobConfig& c, const TrainingData& data,
                                                const StagePlacement& placed, bool planned, int rank) {
  pipeline::PipelineTrainerOptions options;
  options.trainer = c.trainer;
  options.trainer.metricStyle = data.objective.metricStyle();
  options.schedule = pipeline::parseScheduleKind(c.pipeline.schedule);
  options.microBatches = microBatchesOf(c);
  options.partition = placed.placement.partition;
  options.livePartition = planned;
  options.partitionEvery = c.orchestration.rebalanceEvery;  // the Repartitioner's decision period
  if (!c.emulation.slowdown.empty())
    options.slowdown = [&c, rank](int64_t step) { return c.emulation.slowdown.at(step, rank); };
  return options;
}

}  // namespace

int runPipelineWorker(const JobConfig& config) {
  applyWorkerThreads(config);
  const bool planned = config.pipeline.planned();
  const double gemmFlops = columnHeadGemmFlops(config, planned);
  keepFreedMemory();
  const comm::RendezvousOptions rv = rendezvousOptions(config);
  auto world = comm::rendezvous(rv);
  installLinkEmulation(*world, config.emulation);

  const TrainingData data = loadTrainingData(config);
  auto model = buildWorkerModel(config, data.train->spec(), /*announce=*/world->rank() == 0);
  model.net->separateSharedWeights();  // before anything takes the parameters: a stage owns its tensors
  const auto placed = placeStages(config, *world, *model.net, *data.train);
  JobConfig c = config;
  c.split = Split{placed.placement.shares};  // the allocator starts from the plan's shares
  const auto topology = placed.placement.topology();
  auto groups = pipeline::formPipelineGroups(*world, topology);
  const auto blocks = model.net->blocks();
  if (world->rank() == 0) {
    announceStages(blocks, placed.placement, topology, c);
    if (c.pipeline.explainPartition) explainPartition(placed);
  }

  // The columns' split is decided among the column heads (stage 0), from what they observe of their columns:
  // memory and the GEMM prior until steps are timed (no link probes among the stage groups). None off stage 0.
  GroupWiring wiring(c, rv, {c10::Device(c10::DeviceType::CPU), gemmFlops, 0, /*linkProbes=*/false});
  if (groups.firstStage()) {
    wiring.startMonitor(*groups.stage);
    wiring.makeAllocator(c, model.info);
  }
  std::unique_ptr<pipeline::Repartitioner> repartitioner;
  if (planned && world->rank() == 0) repartitioner = makeRepartitioner(c, placed, blocks);
  const auto options = trainerOptions(c, data, placed, planned, world->rank());
  // The checkpoint's identity is the whole model's: taken before the trainer frees the other stages.
  WorkerCheckpoints checkpoints(c, *world, *model.net);
  const auto stageSync = makeStageSync(*groups.stage, c);
  if (world->rank() == 0 && c.comm.explain) {
    std::string text = stageSync->explain();
    if (!text.empty() && text.back() == '\n') text.pop_back();
    spdlog::info("gradient synchronisation among the replicas of each stage: {}", text);
  }
  pipeline::PipelineParts parts{*model.net,
                                *data.train,
                                data.test.get(),
                                data.objective,
                                groups,
                                *stageSync,
                                wiring.hasAllocator() ? &wiring.allocator() : nullptr};
  parts.controller = repartitioner.get();
  pipeline::PipelineTrainer trainer(options, parts);
  checkpoints.resumeIfAsked(trainer);
  std::vector<trainer::StepBoundary*> boundaries;
  checkpoints.addTo(boundaries);
  // A restarted job must not repeat its first attempt's injected fault.
  auto fault = config.worker->attempt == 0 ? elastic::faultFromEnvironment(config.worker->rank) : nullptr;
  if (fault) boundaries.push_back(fault.get());
  const auto summary = trainer::RunLoop(options.trainer, {trainer, boundaries}).run();

  if (!c.exportPath.empty() || !c.saveParams.empty()) trainer.gatherModelToRankZero();
  writeModelOutputs(c, *model.net, model.net->parameters(), world->rank(), summary, options.trainer.metricStyle);
  world->barrier();  // rank 0 may serve the store: nobody leaves while others still need it
  return 0;
}

}  // namespace balancenet::worker
