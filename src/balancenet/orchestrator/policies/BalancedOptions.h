// BalancedOptions: every threshold of BalancedPolicy, with its named default and why it has that value.
#pragma once

#include "balancenet/comm/OffloadPlan.h"

namespace balancenet::orchestrator {

struct BalancedOptions {
  // Weight of the newest fit when a_i, c_i are exponentially smoothed across decisions (1: no smoothing).
  // 0.5 halves the influence of one noisy window while following a steady drift within a few decisions.
  static constexpr double kDefaultSmoothing = 0.5;
  // Keep the current split unless the best split's predicted step time is lower by more than this fraction:
  // measurement noise of a few percent must not make homogeneous nodes trade samples back and forth.
  static constexpr double kDefaultHysteresis = 0.03;
  // The threshold also grows with the measured noise: at least this many standard errors of a node's
  // mean compute time over its window (the median over nodes). On a shared, oversubscribed machine
  // (4 workers on 2 cores: +-10% per step) a one-sample move predicted to gain 3% is noise, not a gain;
  // on quiet nodes the threshold stays at `hysteresis`, and a real slowdown gains far more than either.
  static constexpr double kDefaultNoiseMultiplier = 3.0;
  // Quick reaction: a node whose latest window deviates from its model by more than this fraction...
  static constexpr double kDefaultReactThreshold = 0.25;
  // ...and which a least-squares refit including that window still misses by more than this fraction
  // (so a fixed cost revealed by a batch change is not mistaken for a change of the node) loses its history
  // and is refitted from the latest window alone, without smoothing.
  static constexpr double kDefaultReactResidual = 0.10;
  // Windows remembered per node (each window adds one (batch, median compute ms) point per batch size seen).
  static constexpr int kDefaultHistoryPoints = 8;
  // Least squares (fixed cost a_i and per-sample cost c_i) only when the remembered batch sizes differ by at
  // least this fraction of the largest; closer batches make the intercept pure noise.
  static constexpr double kDefaultMinFitSpread = 0.10;
  // A node seen at one batch size only gets a fixed cost of f * t, where f is the smallest fixed-cost
  // fraction a_k / t_k fitted on other nodes (0 if none is fitted yet), at most this: without evidence we
  // assume the literature's proportional model (a = 0); with evidence, no more than the least any node shows.
  static constexpr double kDefaultMaxFixedCostFraction = 0.10;

  double smoothing = kDefaultSmoothing;
  double hysteresis = kDefaultHysteresis;
  double noiseMultiplier = kDefaultNoiseMultiplier;
  double reactThreshold = kDefaultReactThreshold;
  double reactResidual = kDefaultReactResidual;
  int historyPoints = kDefaultHistoryPoints;
  double minFitSpread = kDefaultMinFitSpread;
  double maxFixedCostFraction = kDefaultMaxFixedCostFraction;
  // Leave-out (issue 55, LeaveOut.h): a rank whose samples are worth less than its hand-over costs its peer gets a
  // share of 0. Off unless the job's engine and exchange can run a rank with no share (worker/GroupWiring turns it on
  // for the C++ worker with an offloading all-reduce); `offloadBelow` is that exchange's --offload-below.
  bool leaveOut = false;
  double offloadBelow = comm::kDefaultOffloadBelow;
};

}  // namespace balancenet::orchestrator
