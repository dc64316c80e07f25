// MemoryEstimate: optimiser state plus the activations a schedule keeps, against --memory-limit-mb.
#include "balancenet/pipeline/MemoryEstimate.h"

#include <cmath>

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::pipeline {
namespace {

// --memory-limit-mb counts MiB, as the other "MB" of the project do. Named apart from other files' MiB constants:
// this file is a torch file (Blocks.h), compiled in unity batches with the module's others.
constexpr double kEstimateMiB = 1024.0 * 1024.0;

// Few enough decimals to read, enough that a need just above the limit does not print as equal to it.
int mibDecimals(int64_t needBytes, double limitMb) {
  int decimals = 0;
  for (double scale = 1; decimals < 3 && std::round(needBytes / kEstimateMiB * scale) / scale <= limitMb; scale *= 10)
    ++decimals;
  return decimals;
}

}  // namespace

int64_t stateBytesPerParameter(const std::string& optimizer) {
  constexpr int64_t kFloat = 4;
  // The parameter and its gradient, plus the optimiser's slots (OptimizerFactory's names; adamw keeps adam's).
  if (optimizer == "sgd") return kFloat * (2 + 1);
  if (optimizer == "adam" || optimizer == "adamw") return kFloat * (2 + 2);
  // --optimizer is checked by OptimizerFactory before any placement is estimated.
  throw InternalError("no memory estimate for optimiser '" + optimizer + "'");
}

StageMemory estimateStageMemory(const std::vector<models::BlockInfo>& blocks, StageRange range, int64_t microBatch,
                                int inFlight, const std::string& optimizer) {
  if (range.first >= range.end || range.end > blocks.size() || microBatch < 1 || inFlight < 1)
    throw InternalError(fmt::format("a memory estimate for blocks [{}, {}) of {}, micro-batch {}, {} in flight",
                                    range.first, range.end, blocks.size(), microBatch, inFlight));
  int64_t parameters = 0, perSample = 0;
  for (size_t b = range.first; b < range.end; ++b) {
    parameters += blocks[b].parameters;
    perSample += blocks[b].memoryPerSampleBytes;
  }
  StageMemory memory;
  memory.stateBytes = parameters * stateBytesPerParameter(optimizer);
  memory.activationBytes = perSample * microBatch * inFlight;
  return memory;
}

void requireFits(const StageMemory& need, double limitMb, int node, const std::string& what, const std::string& hint) {
  if (limitMb < 0) throw InternalError(fmt::format("a memory limit of {} MB", limitMb));  // the flag refuses it
  if (limitMb == 0 || need.total() <= limitMb * kEstimateMiB) return;
  const int decimals = mibDecimals(need.total(), limitMb);
  const auto mib = [&](int64_t bytes) { return fmt::format("{:.{}f} MiB", bytes / kEstimateMiB, decimals); };
  throw UsageError(
      fmt::format("node {} ({}) needs an estimated {} (state {} + activations {}), above "
                  "--memory-limit-mb {}{}",
                  node, what, mib(need.total()), mib(need.stateBytes), mib(need.activationBytes), limitMb,
                  hint.empty() ? "" : "; " + hint));
}

}  // namespace balancenet::pipeline
