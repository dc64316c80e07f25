// PlanCommand: `balancenet plan`, the planner's answer for a job described by flags, on this machine's profile.
#include "balancenet/cli/PlanCommand.h"

#include <algorithm>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "balancenet/cli/LocalProfile.h"
#include "balancenet/cli/PlacementCheck.h"
#include "balancenet/cli/flags/AllocationFlags.h"
#include "balancenet/cli/flags/PipelineFlags.h"
#include "balancenet/core/Error.h"
#include "balancenet/emulation/FactorSchedule.h"
#include "balancenet/orchestrator/policies/PolicySupport.h"
#include "balancenet/trainer/TrainerOptions.h"

namespace balancenet::cli {
using job::kAutoStages;
using job::kDefaultMicroBatchesPerStage;
namespace {

// The flags as train reads them, so that plan and train agree on what a job is.
LocalJob validatedJob(const PlanOptions& o) {
  require(o.nodes >= 1, fmt::format("--nodes must be at least 1, got {}", o.nodes));
  require(o.globalBatch >= 1, fmt::format("--global-batch must be at least 1, got {}", o.globalBatch));
  require(o.microBatches >= 0, fmt::format("--micro-batches must be at least 1 (0: {} x stages), got {}",
                                           kDefaultMicroBatchesPerStage, o.microBatches));
  require(o.top >= 1, fmt::format("--top must be at least 1, got {}", o.top));
  require(o.optimizer == "sgd" || o.optimizer == "adam" || o.optimizer == "adamw",
          fmt::format("--optimizer must be sgd, adam or adamw, got '{}'", o.optimizer));
  pipeline::parseScheduleKind(o.schedule);
  LocalJob job;
  job.model.name = o.model;
  job.model.width = o.width;
  models::assumeDefaultSamples(job.model);
  models::buildModel(job.model);  // an unknown model or a bad width: its UsageError, before profiling
  job.nodes = o.nodes;
  job.globalBatch = o.globalBatch;
  job.microBatches = o.microBatches;
  job.schedule = o.schedule;
  job.optimizer = o.optimizer;
  if (!o.slowdown.empty()) {
    job.slowdown = emulation::FactorSchedule::perNode("--slowdown", o.slowdown, o.nodes);
    for (double s : job.slowdown)
      require(s >= 1, fmt::format("--slowdown factors must be at least 1 (1: full speed), got {}", s));
  }
  if (!o.memoryLimitMb.empty()) job.memoryLimitMb = parseMemoryLimits(o.memoryLimitMb, o.nodes);
  return job;
}

int stagesRequested(const PlanOptions& o) {
  const int stages = parsePipelineStages(o.stages);
  require(stages == kAutoStages || o.nodes % stages == 0,
          fmt::format("--nodes {} is not a multiple of --pipeline-stages {}", o.nodes, stages));
  return stages;
}

std::string jsonString(const std::string& text) {
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"' || ch == '\\')
      out += fmt::format("\\{}", ch);
    else if (ch == '\n')
      out += "\\n";
    else if (static_cast<unsigned char>(ch) < 0x20)
      out += fmt::format("\\u{:04x}", static_cast<int>(ch));
    else
      out += ch;
  }
  return out + "\"";
}

std::string placementJson(const pipeline::Placement& p, int64_t globalBatch) {
  return fmt::format(
      R"({{"stages": {}, "replicas": {}, "micro_batches": {}, "partition": {}, "slot_ranks": [{}], "shares": [{}], )"
      R"("step_ms": {:.4f}, "sync_ms": {:.4f}, "samples_per_s": {:.2f}, "method": {}, "describe": {}}})",
      p.stages, p.replicas, p.microBatches, jsonString(p.partition.str()), fmt::join(p.slotRanks, ", "),
      fmt::join(p.shares, ", "), p.stepMs, p.syncMs, p.stepMs > 0 ? 1000.0 * globalBatch / p.stepMs : 0.0,
      jsonString(p.method), jsonString(p.describe()));
}

std::string placementsJson(const std::vector<pipeline::Placement>& ranked, const pipeline::PlanInput& input,
                           size_t top) {
  std::vector<std::string> items;
  for (size_t i = 0; i < std::min(top, ranked.size()); ++i)
    items.push_back(placementJson(ranked[i], input.globalBatch));
  return fmt::format(R"("placements": [{}], "explain": {})", fmt::join(items, ", "),
                     jsonString(pipeline::explainPlacement(input, ranked.front())));
}

// The job as the start check sees a data-parallel run of it: the split by speed (1 / --slowdown), the caps.
job::JobConfig dataParallelJob(const LocalJob& job) {
  job::JobConfig c;
  c.model = job.model;
  c.trainer.optimizer.name = job.optimizer;
  c.trainer.globalBatch = job.globalBatch;
  c.memoryLimitMb = job.memoryLimitMb;
  std::vector<double> speeds;
  for (int n = 0; n < job.nodes; ++n) speeds.push_back(job.slowdown.empty() ? 1.0 : 1.0 / job.slowdown[n]);
  c.split.batches = orchestrator::apportion(speeds, job.globalBatch).sizes;
  return c;
}

std::string modesTable(const std::vector<DataParallelMode>& modes, const job::JobConfig& c) {
  std::string out = fmt::format(
      "\ndata parallelism, shares by speed ({}): each worker's estimated MiB (and passes) by mode\n", c.split.str());
  out += fmt::format("{:<52}", "mode");
  for (int r = 0; r < c.split.worldSize(); ++r) out += fmt::format(" {:>14}", fmt::format("worker {}", r));
  out += "  fits\n";
  if (c.memoryLimited()) {
    out += fmt::format("{:<52}", "--memory-limit-mb");
    for (int r = 0; r < c.split.worldSize(); ++r)
      out += fmt::format(" {:>14}", c.memoryLimitMbOf(r) > 0 ? fmt::format("{:.1f}", c.memoryLimitMbOf(r)) : "-");
    out += "\n";
  }
  for (const auto& m : modes) {
    out += fmt::format("{:<52}", m.flags.empty() ? "replicated, one pass" : m.flags);
    for (size_t r = 0; r < m.mib.size(); ++r)
      out += fmt::format(" {:>14}", m.passes[r] > 1 ? fmt::format("{:.1f} ({})", m.mib[r], m.passes[r])
                                                    : fmt::format("{:.1f}", m.mib[r]));
    out += m.fits ? "  yes\n" : fmt::format("  no (worker {})\n", m.tightest);
  }
  return out;
}

std::string modesJson(const std::vector<DataParallelMode>& modes) {
  std::vector<std::string> items;
  for (const auto& m : modes)
    items.push_back(fmt::format(R"({{"flags": {}, "mib": [{:.2f}], "passes": [{}], "fits": {}}})", jsonString(m.flags),
                                fmt::join(m.mib, ", "), fmt::join(m.passes, ", "), m.fits ? "true" : "false"));
  return fmt::format("[{}]", fmt::join(items, ", "));
}

}  // namespace

void addPlanFlags(CLI::App& app, PlanOptions& o) {
  app.add_option("--nodes,--workers", o.nodes, "Workers the job would have")->capture_default_str();
  app.add_option("--model", o.model, "A zoo model (see 'balancenet models') or a TorchScript file")
      ->capture_default_str();
  app.add_option("--width", o.width, "Scale channels and hidden sizes, as in train")->capture_default_str();
  app.add_option("--pipeline-stages", o.stages,
                 "Stages per pipeline, or auto: every shape from data parallelism (1) to a pure pipeline (--nodes)")
      ->capture_default_str();
  addGlobalBatchFlag(app, o.globalBatch, "Samples per step over all workers")
      ->default_str(std::to_string(trainer::kDefaultGlobalBatch));  // 0 until parsed: train's default
  app.add_option(
      "--micro-batches", o.microBatches,
      fmt::format("Micro-batches per pipeline per step (default: {} x stages)", kDefaultMicroBatchesPerStage));
  app.add_option("--schedule", o.schedule, "gpipe or 1f1b, as in train")->capture_default_str();
  app.add_option("--optimizer", o.optimizer, "sgd, adam or adamw: the optimiser state each stage holds")
      ->capture_default_str();
  app.add_option("--slowdown", o.slowdown,
                 "One factor per worker (>= 1), e.g. 1,1,2,4: its costs are this profile's x it");
  app.add_option("--memory-limit-mb", o.memoryLimitMb, "One cap for every worker or one per worker, in MB (0: none)");
  app.add_option("--top", o.top, "Placements to show, best first")->capture_default_str();
  app.add_flag("--json", o.json, "Print the placements and the explanation as one JSON object");
}

int runPlan(const PlanOptions& given) {
  PlanOptions o = given;
  if (o.globalBatch == 0) o.globalBatch = trainer::kDefaultGlobalBatch;
  const LocalJob job = validatedJob(o);
  pipeline::PlanRequest request;
  request.stages = stagesRequested(o);
  const auto input = profileLocally(job);
  const auto ranked = pipeline::rankPlacements(input, request);
  const auto dataParallel = dataParallelJob(job);
  const auto modes = dataParallelModes(dataParallel);
  if (ranked.empty()) {
    // No placement the planner cuts fits: the refusal names the tightest worker, and where a data-parallel mode
    // (passes, recomputation, sharded state) fits, the table says which instead.
    const bool some = std::any_of(modes.begin(), modes.end(), [](const DataParallelMode& m) { return m.fits; });
    try {
      pipeline::planPlacement(input, request);
    } catch (const UsageError& e) {
      if (!some) throw;
      if (o.json) {
        std::cout << fmt::format("{{\"placements\": [], \"explain\": {}, \"data_parallel_modes\": {}}}\n",
                                 jsonString(e.what()), modesJson(modes));
      } else {
        std::cout << "no placement the planner cuts fits: " << e.what() << "\n" << modesTable(modes, dataParallel);
      }
      return 0;
    }
  }
  if (o.json) {
    std::cout << fmt::format("{{{}, \"data_parallel_modes\": {}}}\n",
                             placementsJson(ranked, input, static_cast<size_t>(o.top)), modesJson(modes));
    return 0;
  }
  std::cout << fmt::format("{} on {} workers, global batch {}, profiled on this machine; best first:\n", o.model,
                           o.nodes, o.globalBatch)
            << rankedPlacementLines(ranked, o.globalBatch, static_cast<size_t>(o.top)) << "\nthe best placement:\n"
            << pipeline::explainPlacement(input, ranked.front()) << modesTable(modes, dataParallel);
  return 0;
}

}  // namespace balancenet::cli
