// SufficientFactorSync: Poseidon's sufficient-factor broadcasting (sfb) and per-layer hybrid choice (hybrid).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "balancenet/comm/BucketedAllReduceSync.h"
#include "balancenet/comm/FactorCostModel.h"
#include "balancenet/comm/FactorLinear.h"
#include "balancenet/comm/GradientSync.h"
#include "balancenet/comm/group/Collectives.h"
#include "balancenet/core/Timeline.h"

namespace balancenet::comm {

struct FactorSyncOptions {
  bool hybrid = false;    // false: every FactorLinear layer by SFB; true: per layer, FactorCostModel decides
  BucketOptions buckets;  // for all other parameters, and whether factors leave during backward (overlap)
  // The split explain() describes before the first step (the first beginStep() re-decides anyway).
  std::vector<int64_t> initialBatches;
};

// The fully connected layers of the model are FactorLinear modules (built through factorLinearFactory());
// all other parameters go through a BucketedAllReduceSync. As soon as backward has produced a layer's u,
// the layer starts its exchange (same order on every rank: backward order):
// - SFB: rank i's factors [u | v] (K_i rows), padded with zero rows to max_j K_j, are all-gathered; every
//   rank then rebuilds the weight gradient sum_j U_j^T V_j (zero rows add nothing) and the bias gradient
//   sum_j sum_k u_jk. Each u already carries the 1/B of the loss, so this is the all-reduced gradient.
// - all-reduce (hybrid only): the local gradient U_i^T V_i and sum_k u_ik are summed by an all-reduce.
// Bytes are counted as Poseidon sends them (K_i (M+N) floats to each peer), not as the padded payload.
class SufficientFactorSync : public GradientSync {
 public:
  SufficientFactorSync(Collectives& comm, torch::nn::Module& net, FactorSyncOptions options);
  ~SufficientFactorSync() override;
  SufficientFactorSync(const SufficientFactorSync&) = delete;
  SufficientFactorSync& operator=(const SufficientFactorSync&) = delete;

  void beginStep(const SyncContext& context) override;
  SyncStats synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars, const SyncContext& context) override;
  std::string explain() const override;

  // The current choice for each FactorLinear layer, in model order.
  const std::vector<FcDecision>& decisions() const { return decisions_; }
  // How many layer exchanges the last step started before backward had finished.
  int exchangesStartedDuringBackward() const { return startedEarly_; }

 private:
  struct Layer {
    FactorLinear module{nullptr};
    int weight = -1;                   // index into the model's parameter list
    int bias = -1;                     // -1: no bias
    at::Tensor v, u;                   // this step's factors, once backward produced them
    at::Tensor send;                   // what this rank contributes (padded factors, or its local gradient)
    std::vector<at::Tensor> gathered;  // SFB: every rank's padded factors
    PendingWork work;
    bool started = false;
  };

  void onFactors(size_t l, const at::Tensor& v, const at::Tensor& u);
  void decide(const std::vector<int64_t>& batches);
  void start(size_t l);
  void finish(size_t l, const std::vector<at::Tensor>& grads);
  void addTraffic(size_t l, SyncStats& stats) const;

  Collectives& comm_;
  FactorSyncOptions options_;
  std::vector<Layer> layers_;
  std::vector<FcDecision> decisions_;  // parallel to layers_
  std::vector<int64_t> batches_;       // the split decisions_ were made for
  std::unique_ptr<BucketedAllReduceSync> rest_;
  std::vector<int> restParams_;  // model parameter index of each of rest_'s parameters
  size_t parameterCount_ = 0;
  bool armed_ = false;  // between beginStep() and synchronize(), with overlap
  int startedEarly_ = 0;
  Timeline* timeline_ = nullptr;
};

}  // namespace balancenet::comm
