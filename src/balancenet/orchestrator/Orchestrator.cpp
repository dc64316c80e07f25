// Gathering metrics, deciding on rank 0, broadcasting the split, logging the decision.
//
// Wire format of one rank's metrics (float64, fixed length so one all-gather carries them):
//   [rank, batch, computeMs, syncMs, flopsPerSample, opsPerSecond, memoryUsed, memoryTotal, bandwidth,
//    maxBatch, nRecent, ownMs, servingMs, clientsServed, (batch, computeMs) x window, latencies]
// latencies: latencyMs x worldSize (all pairs), or with --probe-peers k: peer rank x k, then latencyMs x k
// (a peer of -1: not measured yet). reportRowLength() is the length.
#include "balancenet/orchestrator/Orchestrator.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <numeric>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "balancenet/core/AtomicFile.h"
#include "balancenet/core/Error.h"
#include "balancenet/orchestrator/policies/LeaveOut.h"

namespace balancenet::orchestrator {
namespace {

constexpr int kHeader = kReportHeaderDoubles;
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

Orchestrator::Orchestrator(std::unique_ptr<Policy> policy, Split initial, comm::Collectives& comm, NodeSampler sampler,
                           OrchestratorOptions options, std::unique_ptr<BatchSizer> sizer)
    : policy_(std::move(policy)),
      sizer_(std::move(sizer)),
      current_(std::move(initial)),
      comm_(comm),
      sampler_(std::move(sampler)),
      options_(std::move(options)),
      window_(reportWindow(options_.rebalanceEvery)),
      period_(std::max(1, options_.rebalanceEvery)) {
  nominalBatch_ = options_.globalBatch > 0 ? options_.globalBatch : current_.total();
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
  // Every step's gradient norms count, the first one's too: they are not a speed.
  if (sizer_) sizer_->observe(mine, current_);
  if (mine.step == 0) return;  // the first step pays one-time allocations: not the node's speed
  observed_.push_back(mine);
  if (static_cast<int>(observed_.size()) > window_) observed_.erase(observed_.begin());
}

std::string Orchestrator::saveState() const {
  return nlohmann::json{{"split", current_.batches},
                        {"last_decision", lastDecision_},
                        {"next_step", nextStep_},
                        {"period", period_},
                        {"global_batch", nominalBatch_},
                        {"lr_factor", lrFactor_},
                        {"sizer", sizer_ ? sizer_->saveState() : std::string()},
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
    period_ = j.value("period", period_);  // checkpoints before --rebalance-budget have none
    // Checkpoints before issue 32 have no B of their own: the flags' stays.
    nominalBatch_ = j.value("global_batch", nominalBatch_);
    lrFactor_ = j.value("lr_factor", lrFactor_);
    if (sizer_) sizer_->loadState(j.value("sizer", std::string()));
  } catch (const nlohmann::json::exception& e) {
    throw RuntimeFailure(fmt::format("orchestrator state unreadable: {}", e.what()));
  }
  observed_.clear();
  // A decision due at the first resumed step would have nothing measured: the checkpoint's split stays until the
  // next one (the same on every rank: they all resume from the same step).
  if (decidesAt(nextStep_)) lastDecision_ = nextStep_;
  if (comm_.rank() == 0) log(nextStep_, {}, {current_, "resumed from a checkpoint"});
}

std::vector<double> Orchestrator::encode(const NodeMetrics& m) const {
  const int world = comm_.size();
  std::vector<double> row(reportRowLength(options_.rebalanceEvery, world, options_.probePeers), 0.0);
  const double header[kHeader] = {double(m.rank),
                                  double(m.batch),
                                  m.computeMs,
                                  m.waitMs,
                                  m.flopsPerSample,
                                  m.opsPerSecond,
                                  m.memoryUsedBytes,
                                  m.memoryTotalBytes,
                                  m.bandwidthBytesPerSecond,
                                  double(m.maxBatch),
                                  double(std::min<size_t>(m.recent.size(), window_)),
                                  m.ownMs,
                                  m.servingMs,
                                  m.clientsServed};
  std::copy(header, header + kHeader, row.begin());
  for (size_t i = 0; i < m.recent.size() && i < static_cast<size_t>(window_); ++i) {
    row[kHeader + 2 * i] = static_cast<double>(m.recent[i].first);
    row[kHeader + 2 * i + 1] = m.recent[i].second;
  }
  double* latencies = row.data() + kHeader + 2 * window_;
  const int k = options_.probePeers;
  if (k <= 0) {
    for (int j = 0; j < world && j < static_cast<int>(m.latencyMs.size()); ++j) latencies[j] = m.latencyMs[j];
    return row;
  }
  for (int i = 0; i < k; ++i) {
    const bool measured = i < static_cast<int>(m.latencyPeers.size()) && i < static_cast<int>(m.latencyMs.size());
    latencies[i] = measured ? m.latencyPeers[i] : -1.0;
    latencies[k + i] = measured ? m.latencyMs[i] : 0.0;
  }
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
  m.ownMs = row[11];
  m.servingMs = row[12];
  m.clientsServed = row[13];
  for (int i = 0; i < static_cast<int>(row[10]); ++i)
    m.recent.emplace_back(static_cast<int64_t>(row[kHeader + 2 * i]), row[kHeader + 2 * i + 1]);
  const double* latencies = row + kHeader + 2 * window_;
  const int k = options_.probePeers;
  if (k <= 0) {
    m.latencyMs.assign(latencies, latencies + comm_.size());
    return m;
  }
  for (int i = 0; i < k; ++i) {
    if (latencies[i] < 0) continue;
    m.latencyPeers.push_back(static_cast<int>(latencies[i]));
    m.latencyMs.push_back(latencies[k + i]);
  }
  return m;
}

bool Orchestrator::decidesAt(int64_t step) const {
  if (step == 0 || step == lastDecision_) return false;
  return step % period_ == 0 || (sizer_ && sizer_->mustDecideAt(step));
}

Split Orchestrator::splitFor(int64_t step) {
  if (!decidesAt(step)) return current_;
  lastDecision_ = step;
  Stopwatch rebalance;
  double stepMs = 0;  // the window's mean step (compute + sync), what the rebalance is weighed against
  for (const auto& r : observed_) stepMs += (r.computeMs + r.syncMs) / static_cast<double>(observed_.size());
  const NodeSample sample = sampler_ ? sampler_() : NodeSample{};
  const NodeMetrics mine = summarizeWindow(comm_.rank(), current_.batches[comm_.rank()], observed_, sample,
                                           options_.flopsPerSample, options_.memoryPerSampleBytes);
  auto rows = comm_.allgather(at::tensor(encode(mine), at::kDouble));

  at::Tensor decided;
  if (comm_.rank() == 0) {
    PolicyInput input;
    input.step = step;
    // The nominal B, not the current total: BNO's sizes sum to more than B, and feeding that back as
    // the next B would compound decision after decision.
    input.globalBatch = nominalBatch_;
    input.current = current_;
    for (const auto& r : rows) input.nodes.push_back(decode(r.data_ptr<double>()));
    BatchChoice batch{nominalBatch_, lrFactor_, ""};
    if (sizer_) batch = sizer_->choose(input);
    input.globalBatch = batch.globalBatch;
    Decision decision = decideOnMaster(*policy_, input);
    if (!batch.note.empty()) decision.note = batch.note + "; " + decision.note;
    log(step, input.nodes, decision);
    std::vector<int64_t> message = decision.split.batches;
    message.push_back(widenedPeriod(period_, lastRebalanceMs_, stepMs, options_.rebalanceBudget));
    message.push_back(batch.globalBatch);
    int64_t factorBits = 0;  // a double through the int64 broadcast, bit for bit: every rank scales alike
    static_assert(sizeof(factorBits) == sizeof(batch.lrFactor));
    std::memcpy(&factorBits, &batch.lrFactor, sizeof(factorBits));
    message.push_back(factorBits);
    decided = at::tensor(message, at::kLong);
  } else {
    decided = at::zeros({comm_.size() + 3}, at::kLong);
  }
  // The split, then the period from the next decision on (the same on every rank).
  std::vector<at::Tensor> out{decided};
  comm_.broadcast(out, 0);
  Split next{std::vector<int64_t>(out[0].data_ptr<int64_t>(), out[0].data_ptr<int64_t>() + comm_.size())};
  const int64_t* tail = out[0].data_ptr<int64_t>() + comm_.size();
  const int period = static_cast<int>(tail[0]);
  if (comm_.rank() == 0 && tail[1] != nominalBatch_)
    spdlog::info("step {}: global batch {} -> {}", step, nominalBatch_, tail[1]);
  nominalBatch_ = tail[1];
  std::memcpy(&lrFactor_, &tail[2], sizeof(lrFactor_));
  if (comm_.rank() == 0 && period != period_)
    spdlog::info("step {}: a rebalance took {:.3g} ms against {:.3g} ms steps: every {} steps from now on", step,
                 lastRebalanceMs_, stepMs, period);
  period_ = period;
  lastRebalanceMs_ = rebalance.elapsedMs();
  if (comm_.rank() == 0 && !(next == current_)) {
    spdlog::info("step {}: {} split {} -> {}", step, policy_->name(), current_.str(), next.str());
    for (const std::string& change : membershipChanges(current_, next)) spdlog::info("step {}: {}", step, change);
  }
  current_ = next;
  observed_.clear();
  return current_;
}

void Orchestrator::log(int64_t step, const std::vector<NodeMetrics>& nodes, const Decision& decision) {
  for (int r = 0; r < decision.split.worldSize(); ++r) {
    const NodeMetrics m = r < static_cast<int>(nodes.size()) ? nodes[r] : NodeMetrics{};
    double latency = 0;
    // All pairs: the entry to itself (0) is not a link; probed peers are all links.
    const size_t links =
        m.latencyPeers.empty() ? m.latencyMs.size() - std::min<size_t>(m.latencyMs.size(), 1) : m.latencyMs.size();
    if (links > 0) latency = std::accumulate(m.latencyMs.begin(), m.latencyMs.end(), 0.0) / links;
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
