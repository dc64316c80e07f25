// Gathering metrics, deciding on rank 0, broadcasting the split, logging the decision.
//
// Wire format of one rank's metrics (float64, fixed length so one all-gather carries them):
//   [rank, batch, computeMs, syncMs, flopsPerSample, opsPerSecond, memoryUsed, memoryTotal, bandwidth,
//    maxBatch, nRecent, (batch, computeMs) x window, latencyMs x worldSize]
#include "balancenet/orchestrator/Orchestrator.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <numeric>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "balancenet/core/AtomicFile.h"
#include "balancenet/core/Error.h"

namespace balancenet::orchestrator {
namespace {

constexpr int kHeader = 11;
// Share of the node's available memory a worker may grow into: the rest is headroom for everything else.
constexpr double kUsableMemoryShare = 0.8;
constexpr int kMaxWindow = 64;
// splits.csv is rewritten (with fsync: ~15 ms here) when the split changes or this often, not at every
// decision: rank 0 writes it while the other ranks wait for the decision.
constexpr double kLogWriteEveryMs = 10000;

// The rows an earlier group of this job wrote (empty when there are none, e.g. on another machine).
std::string existingLog(const std::string& runDir) {
  if (runDir.empty()) return "";
  std::ifstream in(runDir + "/splits.csv", std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

Orchestrator::Orchestrator(std::unique_ptr<Policy> policy, Split initial, comm::Communicator& comm, NodeSampler sampler,
                           OrchestratorOptions options)
    : policy_(std::move(policy)),
      current_(std::move(initial)),
      comm_(comm),
      sampler_(std::move(sampler)),
      options_(std::move(options)),
      window_(std::min(kMaxWindow, std::max(1, options_.rebalanceEvery))) {
  if (comm_.rank() != 0) return;
  if (options_.continueLog) log_ = existingLog(options_.runDir);
  if (log_.empty())
    log_ = "step,policy,rank,batch,compute_ms,wait_ms,ops_per_s,memory_mb,mean_latency_ms,bandwidth_mbps,note\n";
  log(options_.firstStep, {}, {current_, options_.firstNote});
}

Orchestrator::~Orchestrator() {
  try {
    writeLog();
  } catch (const std::exception& e) {
    spdlog::warn("splits.csv not written: {}", e.what());
  }
}

void Orchestrator::observe(const metrics::StepRecord& mine) {
  nextStep_ = mine.step + 1;
  if (mine.step == 0) return;  // the first step pays one-time allocations: not the node's speed
  observed_.push_back(mine);
  if (static_cast<int>(observed_.size()) > window_) observed_.erase(observed_.begin());
}

std::string Orchestrator::saveState() const {
  return nlohmann::json{{"split", current_.batches},
                        {"last_decision", lastDecision_},
                        {"next_step", nextStep_},
                        {"policy", policy_->saveState()}}
      .dump();
}

void Orchestrator::loadState(const std::string& state) {
  if (state.empty()) return;
  try {
    const auto j = nlohmann::json::parse(state);
    Split split{j.at("split").get<std::vector<int64_t>>()};
    split.validate(comm_.size(), split.total());
    policy_->loadState(j.at("policy").get<std::string>());
    current_ = split;
    lastDecision_ = j.at("last_decision").get<int64_t>();
    nextStep_ = j.at("next_step").get<int64_t>();
  } catch (const nlohmann::json::exception& e) {
    throw RuntimeFailure(fmt::format("orchestrator state unreadable: {}", e.what()));
  }
  observed_.clear();
  if (comm_.rank() == 0) log(nextStep_, {}, {current_, "resumed from a checkpoint"});
}

std::vector<double> Orchestrator::encodeLocal() const {
  const int world = comm_.size();
  std::vector<double> row(kHeader + 2 * window_ + world, 0.0);
  const NodeSample sample = sampler_ ? sampler_() : NodeSample{};
  double compute = 0, sync = 0, samples = 0;
  for (const auto& r : observed_) {
    compute += r.computeMs;
    sync += r.syncMs;
    samples += r.batch;
  }
  const double n = std::max<size_t>(1, observed_.size());
  const double ops = compute > 0 ? 3 * options_.flopsPerSample * samples / (compute / 1000) : sample.gemmFlops;
  const int rank = comm_.rank();
  // Memory cap: the batch in force (already resident) plus what the available memory holds.
  double maxBatch = 0;
  if (options_.memoryPerSampleBytes > 0 && sample.memoryAvailableBytes > 0)
    maxBatch = current_.batches[rank] +
               std::floor(kUsableMemoryShare * sample.memoryAvailableBytes / options_.memoryPerSampleBytes);
  double header[kHeader] = {double(rank),
                            double(current_.batches[rank]),
                            compute / n,
                            sync / n,
                            options_.flopsPerSample,
                            ops,
                            sample.residentBytes,
                            sample.memoryTotalBytes,
                            sample.bandwidthBytesPerSecond,
                            maxBatch,
                            double(observed_.size())};
  std::copy(header, header + kHeader, row.begin());
  for (size_t i = 0; i < observed_.size(); ++i) {
    row[kHeader + 2 * i] = observed_[i].batch;
    row[kHeader + 2 * i + 1] = observed_[i].computeMs;
  }
  for (int j = 0; j < world && j < static_cast<int>(sample.latencyMs.size()); ++j)
    row[kHeader + 2 * window_ + j] = sample.latencyMs[j];
  return row;
}

NodeMetrics Orchestrator::decode(const double* row) const {
  NodeMetrics m;
  m.rank = static_cast<int>(row[0]);
  m.batch = static_cast<int64_t>(row[1]);
  m.computeMs = row[2];
  m.waitMs = row[3];  // the sync time for now; the wait part is derived once all ranks are known
  m.flopsPerSample = row[4];
  m.opsPerSecond = row[5];
  m.memoryUsedBytes = row[6];
  m.memoryTotalBytes = row[7];
  m.bandwidthBytesPerSecond = row[8];
  m.maxBatch = static_cast<int64_t>(row[9]);
  for (int i = 0; i < static_cast<int>(row[10]); ++i)
    m.recent.emplace_back(static_cast<int64_t>(row[kHeader + 2 * i]), row[kHeader + 2 * i + 1]);
  m.latencyMs.assign(row + kHeader + 2 * window_, row + kHeader + 2 * window_ + comm_.size());
  return m;
}

Split Orchestrator::splitFor(int64_t step) {
  if (step == 0 || step % options_.rebalanceEvery != 0 || step == lastDecision_) return current_;
  lastDecision_ = step;
  auto local = encodeLocal();
  auto rows = comm_.allgather(at::tensor(local, at::kDouble));

  auto decided = at::tensor(current_.batches, at::kLong);
  if (comm_.rank() == 0) {
    PolicyInput input;
    input.step = step;
    // The nominal B, not the current total: BNO's sizes sum to more than B, and feeding that back as
    // the next B would compound decision after decision.
    input.globalBatch = options_.globalBatch > 0 ? options_.globalBatch : current_.total();
    input.current = current_;
    for (const auto& r : rows) input.nodes.push_back(decode(r.data_ptr<double>()));
    // Waiting = time in the sync beyond the fastest-to-finish rank's (the last to arrive waits for nobody).
    double leastSync = INFINITY;
    for (const auto& n : input.nodes) leastSync = std::min(leastSync, n.waitMs);
    for (auto& n : input.nodes) n.waitMs -= leastSync;
    Decision decision = policy_->decide(input);
    decision.split.validate(comm_.size(), decision.split.total());
    log(step, input.nodes, decision);
    decided = at::tensor(decision.split.batches, at::kLong);
  }
  std::vector<at::Tensor> out{decided};
  comm_.broadcast(out, 0);
  Split next{std::vector<int64_t>(out[0].data_ptr<int64_t>(), out[0].data_ptr<int64_t>() + comm_.size())};
  if (comm_.rank() == 0 && !(next == current_))
    spdlog::info("step {}: {} split {} -> {}", step, policy_->name(), current_.str(), next.str());
  current_ = next;
  observed_.clear();
  return current_;
}

void Orchestrator::log(int64_t step, const std::vector<NodeMetrics>& nodes, const Decision& decision) {
  for (int r = 0; r < decision.split.worldSize(); ++r) {
    const NodeMetrics m = r < static_cast<int>(nodes.size()) ? nodes[r] : NodeMetrics{};
    double latency = 0;
    if (m.latencyMs.size() > 1)
      latency = std::accumulate(m.latencyMs.begin(), m.latencyMs.end(), 0.0) / (m.latencyMs.size() - 1);
    std::string note = decision.note;
    std::replace(note.begin(), note.end(), ',', ';');
    // bandwidth_mbps: the rank's outgoing link to the next rank as the monitor last measured it (0: not yet).
    log_ += fmt::format("{},{},{},{},{:.3f},{:.3f},{:.4g},{:.1f},{:.4f},{:.1f},{}\n", step, policy_->name(), r,
                        decision.split.batches[r], m.computeMs, m.waitMs, m.opsPerSecond, m.memoryUsedBytes / 1e6,
                        latency, m.bandwidthBytesPerSecond * 8 / 1e6, note);
  }
  logUnwritten_ = true;
  if (!(decision.split == current_) || !logWritten_ || sinceLogWritten_.elapsedMs() >= kLogWriteEveryMs) writeLog();
}

void Orchestrator::writeLog() {
  if (!logUnwritten_ || options_.runDir.empty()) return;
  ensureDirectory(options_.runDir);
  writeFileAtomically(options_.runDir + "/splits.csv", log_);
  logUnwritten_ = false;
  logWritten_ = true;
  sinceLogWritten_.restart();
}

}  // namespace balancenet::orchestrator
