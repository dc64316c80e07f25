// Orchestrator: the paper's master. Every few steps it gathers node metrics, rank 0 runs the policy,
// and every rank applies the new split from the same step on.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "balancenet/comm/group/Collectives.h"
#include "balancenet/core/Stopwatch.h"
#include "balancenet/orchestrator/Allocator.h"
#include "balancenet/orchestrator/BatchSizer.h"
#include "balancenet/orchestrator/NodeReport.h"
#include "balancenet/orchestrator/policies/Policy.h"

namespace balancenet::orchestrator {

using NodeSampler = std::function<NodeSample()>;

struct OrchestratorOptions {
  int rebalanceEvery = kDefaultRebalanceEvery;
  int64_t globalBatch = 0;          // the nominal B policies work from (a policy's split may sum to more)
  double flopsPerSample = 0;        // forward FLOPs of one sample (model zoo)
  double memoryPerSampleBytes = 0;  // training memory of one more sample (model zoo); 0: no memory caps
  int probePeers = 0;               // --probe-peers: latencies to k peers per rank on the wire; 0: to all ranks
  double rebalanceBudget = 0;       // --rebalance-budget: widen the period while a rebalance costs more (0: fixed)
  std::string runDir;               // splits.csv goes here (rank 0); empty: not written
  // The first row of splits.csv: the initial split at step 0. A group re-formed after a membership
  // change continues the file's rows instead (`continueLog`), from the step it goes on from.
  int64_t firstStep = 0;
  std::string firstNote = "initial split";
  bool continueLog = false;
};

class Orchestrator : public Allocator {
 public:
  // `sizer`: chooses B at each decision (--global-batch auto or a schedule); null: B stays options.globalBatch.
  Orchestrator(std::unique_ptr<Policy> policy, Split initial, comm::Collectives& comm, NodeSampler sampler,
               OrchestratorOptions options, std::unique_ptr<BatchSizer> sizer = nullptr);
  ~Orchestrator() override;  // writes what splits.csv still lacks

  // Collective at decision steps (step > 0, step % period == 0): all ranks must call it for every step, in
  // order, as the trainer does. The period starts at rebalanceEvery; with a rebalanceBudget rank 0 widens
  // it (widenedPeriod, from its last rebalance's cost and the window's step time) and the broadcast of the
  // split carries it, so every rank switches together.
  Split splitFor(int64_t step) override;
  void observe(const metrics::StepRecord& mine) override;
  bool needsGradientNorms() const override { return sizer_ != nullptr; }
  double lrFactor() const override { return lrFactor_; }
  double noiseScale() const override { return sizer_ ? sizer_->noiseScale() : -1; }
  // The split in force, the last decision step and the policy's own state (JSON). The observation
  // window is not kept: the first decision after a restart sees only the steps since.
  std::string saveState() const override;
  void loadState(const std::string& state) override;

 private:
  std::vector<double> encode(const NodeMetrics& mine) const;
  NodeMetrics decode(const double* row) const;
  void log(int64_t step, const std::vector<NodeMetrics>& nodes, const Decision& decision);
  void writeLog();

  bool decidesAt(int64_t step) const;

  std::unique_ptr<Policy> policy_;
  std::unique_ptr<BatchSizer> sizer_;
  Split current_;
  int64_t nominalBatch_;  // the B policies split (BNO's split may sum to more); the sizer moves it
  double lrFactor_ = 1;   // the sizer's learning-rate factor for nominalBatch_
  comm::Collectives& comm_;
  NodeSampler sampler_;
  OrchestratorOptions options_;
  int window_;                                 // observations kept per decision
  std::vector<metrics::StepRecord> observed_;  // this rank's steps since the last decision
  int period_;                                 // steps between decisions now
  double lastRebalanceMs_ = 0;                 // rank 0: gather, decision and broadcast of the last decision
  int64_t lastDecision_ = 0;
  int64_t nextStep_ = 0;       // the step after the last one observed
  std::string log_;            // splits.csv contents so far (rank 0)
  bool logUnwritten_ = false;  // log_ has rows splits.csv does not have yet
  bool logWritten_ = false;    // splits.csv has been written once by this orchestrator
  Stopwatch sinceLogWritten_;
};

}  // namespace balancenet::orchestrator
