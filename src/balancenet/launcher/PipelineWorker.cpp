// Wiring of one pipeline worker: its stage of the model, its groups, the split over the columns.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "balancenet/comm/Rendezvous.h"
#include "balancenet/core/IntraOpThreads.h"
#include "balancenet/core/MemoryReuse.h"
#include "balancenet/launcher/JobRendezvous.h"
#include "balancenet/launcher/SyncFactory.h"
#include "balancenet/launcher/Worker.h"
#include "balancenet/launcher/WorkerSetup.h"
#include "balancenet/metrics/GemmProbe.h"
#include "balancenet/metrics/ResourceProbe.h"
#include "balancenet/pipeline/PipelineTrainer.h"

namespace balancenet::launcher {
namespace {

pipeline::Partition resolvePartition(const JobConfig& c, size_t blocks) {
  const auto& p = c.pipeline;
  return p.partition == "uniform" ? pipeline::Partition::uniform(blocks, p.stages)
                                  : pipeline::Partition::parse(p.partition, blocks, p.stages);
}

int microBatchesOf(const JobConfig& c) {
  return c.pipeline.microBatches > 0 ? c.pipeline.microBatches : 4 * c.pipeline.stages;
}

// Rank 0 shows where the model was cut: what a user checks first when one stage is slow.
void announceStages(const std::vector<models::BlockInfo>& blocks, const pipeline::Partition& partition,
                    const pipeline::Topology& topology, const JobConfig& c) {
  spdlog::info("pipeline: {} stages x {} replica(s), schedule {}, {} micro-batches, partition {}, split {}",
               topology.stages, topology.replicas, c.pipeline.schedule, microBatchesOf(c), partition.str(),
               c.split.str());
  for (int s = 0; s < partition.stageCount(); ++s) {
    const auto r = partition.stages[s];
    int64_t params = 0, flops = 0;
    for (size_t b = r.first; b < r.end; ++b) {
      params += blocks[b].parameters;
      flops += blocks[b].flopsPerSample;
    }
    spdlog::info("  stage {}: blocks {}-{} ({} .. {}), {} parameters, {:.2f} MFLOPs/sample", s, r.first, r.end - 1,
                 blocks[r.first].name, blocks[r.end - 1].name, params, flops / 1e6);
  }
}

}  // namespace

int runPipelineWorker(const JobConfig& c) {
  setIntraOpThreads(c.threads);
  const auto topology = pipeline::Topology::of(c.worker->worldSize, c.pipeline.stages);
  // The GEMM prior is for the allocator, which only first stages run; measured before others' traffic.
  const double gemmFlops = topology.stageOf(c.worker->rank) == 0 ? metrics::measureGemmFlops() : 0.0;
  keepFreedMemory();
  auto world = comm::rendezvous(rendezvousOptions(c));
  installLinkEmulation(*world, c.emulation);
  auto groups = pipeline::formPipelineGroups(*world, topology);

  const TrainingData data = loadTrainingData(c);
  auto model = buildWorkerModel(c, /*announce=*/world->rank() == 0);
  const auto blocks = model.net->blocks();
  const auto partition = resolvePartition(c, blocks.size());
  if (world->rank() == 0) announceStages(blocks, partition, topology, c);

  // The columns' split is decided among the column heads (stage 0), from what they observe of their
  // columns; no link probes here: the orchestrator sees memory and the GEMM prior until steps are timed.
  std::unique_ptr<orchestrator::Allocator> allocator;
  if (groups.firstStage()) {
    auto sampler = [gemmFlops] {
      return orchestrator::NodeSample{metrics::residentBytes(),
                                      metrics::nodeMemoryTotalBytes(),
                                      metrics::nodeMemoryAvailableBytes(),
                                      {},
                                      0,
                                      gemmFlops,
                                      {}};
    };
    allocator = makeAllocator(c, *groups.stage, model.info, sampler, {});
  }
  pipeline::PipelineTrainerOptions options;
  options.trainer = c.trainer;
  options.schedule = pipeline::parseScheduleKind(c.pipeline.schedule);
  options.microBatches = microBatchesOf(c);
  options.partition = partition;
  if (!c.emulation.slowdown.empty())
    options.slowdown = [&c, rank = world->rank()](int64_t step) { return c.emulation.slowdown.at(step, rank); };
  pipeline::PipelineTrainer trainer(options, {*model.net, data.train, &data.test, groups, allocator.get()});
  const auto summary = trainer.run();
  if (!c.exportPath.empty() || !c.saveParams.empty()) trainer.gatherModelToRankZero();
  writeModelOutputs(c, *model.net, model.net->parameters(), world->rank(), summary);
  world->barrier();  // rank 0 may serve the store: nobody leaves while others still need it
  return 0;
}

}  // namespace balancenet::launcher
