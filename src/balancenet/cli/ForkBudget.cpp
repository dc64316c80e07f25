// ForkBudget: the arithmetic (pure, unit-tested) and the check that reads this host's memory and the model.
#include "balancenet/cli/ForkBudget.h"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "balancenet/core/CgroupLimits.h"
#include "balancenet/core/Error.h"
#include "balancenet/metrics/ResourceProbe.h"
#include "balancenet/models/ModelZoo.h"
#include "balancenet/pipeline/MemoryEstimate.h"

namespace balancenet::cli {
using job::JobConfig;
namespace {

constexpr double kBudgetMiB = 1024.0 * 1024.0;

std::string mib(int64_t bytes) { return fmt::format("{:.0f} MiB", static_cast<double>(bytes) / kBudgetMiB); }

// The largest batch one process trains on at once: its share of the global batch, or a client's local batch.
int64_t largestShare(const JobConfig& c) {
  if (c.federated) return c.federated->localBatch;
  const auto& b = c.split.batches;
  return b.empty() ? c.trainer.globalBatch : *std::max_element(b.begin(), b.end());
}

// The whole model with the largest share, one batch in flight: a pipeline stage holds no more than that.
int64_t modelEstimateBytes(const JobConfig& c) {
  const auto blocks = models::buildModel(c.model).net->blocks();
  const pipeline::StageRange whole{0, blocks.size()};
  // Federated clients train with plain SGD (FederatedOptions); the train flags name their optimiser.
  const std::string optimizer = c.federated ? "sgd" : c.trainer.optimizer.name;
  return pipeline::estimateStageMemory(blocks, whole, std::max<int64_t>(1, largestShare(c)), 1, optimizer).total();
}

}  // namespace

int processesThatFit(int64_t perProcessBytes, int64_t availableBytes) {
  if (perProcessBytes <= 0) return 0;
  return static_cast<int>(std::min<int64_t>(availableBytes / perProcessBytes, 1 << 30));
}

std::optional<std::string> forkRefusal(const ForkBudget& b, const std::string& flag, int others) {
  const int fit = processesThatFit(b.perProcessBytes(), b.availableBytes);
  if (b.processes <= fit) return std::nullopt;
  return fmt::format(
      "{} {} would start {} processes of an estimated {} each ({} runtime + {} model), {} in all, but {} is "
      "available ({}); at most {} {} fit{} (--force starts them anyway)",
      flag, b.processes - others, b.processes, mib(b.perProcessBytes()), mib(kProcessBaselineBytes), mib(b.modelBytes),
      mib(b.perProcessBytes() * b.processes), mib(b.availableBytes), b.availableFrom, flag, std::max(0, fit - others),
      others > 0 ? fmt::format(" (with {} more process{} beside them)", others, others == 1 ? "" : "es") : "");
}

void checkForkBudget(const JobConfig& c) {
  if (c.launch.force) return;
  ForkBudget budget;
  const int servers = c.launch.nodeRank == 0 ? c.comm.servers : 0;  // host 0 also starts the parameter servers
  budget.processes = c.launch.nprocPerNode + servers;
  const auto memAvailable = static_cast<int64_t>(metrics::nodeMemoryAvailableBytes());
  if (memAvailable > 0) {
    budget.availableBytes = memAvailable;
    budget.availableFrom = "MemAvailable in /proc/meminfo";
  }
  if (const auto room = readMemoryRoom(); room && (memAvailable <= 0 || room->availableBytes() < memAvailable)) {
    budget.availableBytes = room->availableBytes();
    budget.availableFrom =
        fmt::format("cgroup limit {} in {}, less {} in use", mib(room->limitBytes), room->source, mib(room->usedBytes));
  }
  if (budget.availableFrom.empty()) return;  // neither figure could be read: nothing to check against
  budget.modelBytes = modelEstimateBytes(c);
  // One host's federated job is the server (rank 0) and --clients clients; --ps servers are beside the workers.
  const bool oneHostFederated = c.federated && c.launch.nnodes == 1;
  const std::string flag = oneHostFederated ? "--clients" : (c.launch.nnodes > 1 ? "--nproc-per-node" : "--workers");
  const int others = oneHostFederated ? 1 : servers;
  spdlog::debug("fork budget: {} processes x ({} runtime + {} model) against {} available ({})", budget.processes,
                mib(kProcessBaselineBytes), mib(budget.modelBytes), mib(budget.availableBytes), budget.availableFrom);
  if (const auto refusal = forkRefusal(budget, flag, others)) throw UsageError(*refusal);
}

}  // namespace balancenet::cli
