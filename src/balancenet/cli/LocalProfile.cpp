// LocalProfile: one profile on this machine standing in for every node of a job not yet started.
#include "balancenet/cli/LocalProfile.h"

#include <algorithm>
#include <limits>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "balancenet/models/Network.h"
#include "balancenet/pipeline/BlockProfiler.h"
#include "balancenet/pipeline/PipelineOptions.h"

namespace balancenet::cli {
using pipeline::kDefaultMicroBatchesPerStage;
namespace {

double valueOr(const std::vector<double>& perNode, int node, double otherwise) {
  return perNode.empty() ? otherwise : perNode.at(node);
}

// The emulation's rule (emulation/LinkModel.h): a message pays the larger latency of its two ends and goes at
// the smaller bandwidth. Empty table: every link free.
pipeline::LinkCosts emulatedLinks(const LocalJob& job) {
  pipeline::LinkCosts links;
  for (double ms : job.netDelayMs) links.latencyMs = std::max(links.latencyMs, ms);
  if (job.netBandwidthMbps.empty()) return links;
  constexpr double kBytesPerMsPerMbps = 1e6 / 8 / 1000;
  auto bytesPerMs = [&](int node) {
    const double mbps = job.netBandwidthMbps.at(node);
    return mbps > 0 ? mbps * kBytesPerMsPerMbps : std::numeric_limits<double>::infinity();
  };
  links.bytesPerMs.assign(job.nodes, std::vector<double>(job.nodes));
  for (int a = 0; a < job.nodes; ++a)
    for (int b = 0; b < job.nodes; ++b) links.bytesPerMs[a][b] = std::min(bytesPerMs(a), bytesPerMs(b));
  return links;
}

}  // namespace

pipeline::PlanInput profileLocally(const LocalJob& job) {
  auto built = models::buildModel(job.model);
  built.net->train();
  const int64_t perMicroBatch = static_cast<int64_t>(job.nodes) * kDefaultMicroBatchesPerStage;
  const int64_t microBatch = std::max<int64_t>(1, (job.globalBatch + perMicroBatch - 1) / perMicroBatch);
  // Random pixels (a probe of zeros could take faster paths than real data); token ids as the data gives them.
  const at::Tensor probe = job.model.probeBatch(microBatch);
  const auto images = job.model.tokenInput ? probe : at::rand_like(probe);
  const auto times = pipeline::profileBlocks(*built.net, images);
  pipeline::PlanInput input;
  input.blocks = built.net->blocks();
  for (int node = 0; node < job.nodes; ++node) {
    const double slowdown = valueOr(job.slowdown, node, 1.0);
    pipeline::NodeCosts costs;
    for (double ms : times.forwardMs) costs.forwardMs.push_back(ms * slowdown);
    for (double ms : times.backwardMs) costs.backwardMs.push_back(ms * slowdown);
    costs.memoryLimitBytes = valueOr(job.memoryLimitMb, node, 0.0) * 1024 * 1024;
    input.nodes.push_back(std::move(costs));
  }
  input.links = emulatedLinks(job);
  input.globalBatch = job.globalBatch;
  input.microBatches = job.microBatches;
  input.schedule = pipeline::parseScheduleKind(job.schedule);
  input.optimizer = job.optimizer;
  return input;
}

std::string rankedPlacementLines(const std::vector<pipeline::Placement>& ranked, int64_t globalBatch, size_t top) {
  std::string lines;
  for (size_t i = 0; i < std::min(top, ranked.size()); ++i) {
    const auto& p = ranked[i];
    lines += fmt::format("{}. {}: {:.1f} ms/step, {:.0f} samples/s ({})\n", i + 1, p.describe(), p.stepMs,
                         p.stepMs > 0 ? 1000.0 * static_cast<double>(globalBatch) / p.stepMs : 0.0, p.method);
  }
  return lines;
}

}  // namespace balancenet::cli
