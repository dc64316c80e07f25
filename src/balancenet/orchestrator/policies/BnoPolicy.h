// BnoPolicy: the BalanceNet Orchestrator's batch sizes, equations (1)-(5) of the paper (section 3.2), verbatim.
#pragma once
#include <vector>

#include "balancenet/orchestrator/policies/Policy.h"

namespace balancenet::orchestrator {

// K_i    = OPS_i / sum_k OPS_k                                   (1)  OPS = opsPerSecond
// MW_i   = 1 - MU_i / sum_k MU_k                                 (2)  MU  = memoryUsedBytes
// NCW_ij = 1 - NL_ij / max_k NL_ik                               (4)  NL  = latencyMs (eq. 3 is how it is measured)
// BS_i   = max(floor((K_i + MW_i + sum_{j=1..N} NCW_ij) / 3 * B), 1)   (5)
//
// As written, sum_j includes j = i, where NL_ii = 0 gives NCW_ii = 1; we keep that term. The sizes then do
// not sum to B: before flooring they sum to (N + sum_ij NCW_ij) / 3 * B, i.e. between 2N/3 and N(N+1)/3
// times B (sum K = 1, sum MW = N - 1, N <= sum NCW <= N^2). The Decision carries them as they are and the trainer uses
// split.total() as the effective global batch, which the note reports. With `normalize` (--bno-normalize) the BS_i are
// rescaled to sum exactly to B (largest remainder, each >= 1).
//
// Degenerate inputs, chosen so that no NaN can appear:
//  - sum OPS = 0 (nothing measured): K_i = 1/N;  sum MU = 0: MU_i/sum MU = 1/N, so MW_i = 1 - 1/N;
//  - max_k NL_ik = 0 (all latencies 0, e.g. one node or nothing measured): NCW_ij = 1 for every j;
//  - a latency vector shorter than N counts the missing entries as 0; negative or non-finite metrics as 0.
//  - a single node: K = 1, MW = 0, NCW_11 = 1, so BS_1 = floor(2/3 * B).
//
// At scale (--probe-peers k, NodeMetrics::latencyPeers set) node i knows NL_ij for k sampled peers only (ring
// neighbours and seeded random ranks), not all N. The estimator: sum_j NCW_ij ~= 1 + (N - 1) x (mean over
// the sampled j != i of 1 - NL_ij / max_{sampled k} NL_ik). The j = i term stays exact (1); the mean is
// unbiased for the mean over all j of 1 - NL_ij / M when M is the true max_k NL_ik, but the sampled
// max underestimates it, so each NCW_ij, and the sum, is biased low by a factor of about (sampled max / true max)
// in its latency part; with uniform latencies (a switched cluster) both maxima agree and the bias vanishes.
// No peer measured yet: the degenerate all-zero case above (sum = N).
class BnoPolicy : public Policy {
 public:
  explicit BnoPolicy(bool normalize = false) : normalize_(normalize) {}
  std::string name() const override { return "bno"; }
  Decision decide(const PolicyInput& input) override;

  // The unrounded fraction (K_i + MW_i + sum_j NCW_ij) / 3 of every node, equations (1)-(4).
  static std::vector<double> fractions(const PolicyInput& input);

 private:
  bool normalize_;
};

}  // namespace balancenet::orchestrator
