// LeaveOut: which ranks the balanced policy leaves out of a step's exchange (a share of 0; issue 55).
//
// Offloading (comm/OffloadPlan) takes a rank with a small share out of the ring, but its peer still receives, adds
// and sends back the whole gradient every step for it. A host whose few samples save the others less time than its
// hand-over costs them slows the job by taking part. Left out, it sends nothing: it gets the sum back (to stay in
// step) and times a one-sample probe, so it is taken back in once its samples are worth their hand-over again.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "balancenet/core/Split.h"

namespace balancenet::orchestrator {

// Per rank t_i(b) = a_i + c_i b: its compute line and its own work, without the serving of clients (that follows
// from the plan of each split tried).
struct MemberLines {
  std::vector<double> a, c;
  std::vector<int64_t> caps;  // <= 0 or empty: no cap
};

struct MembershipChoice {
  std::vector<int64_t> batches;  // 0 for a rank left out
  double ms = 0;                 // the predicted step
};

// The predicted step of `batches`: max over the ranks with a share of a_i + c_i b_i + h * (clients that hand i a
// gradient), the clients being comm::planOffload's for `below`. A left-out rank costs its peer nothing on the step's
// path: its sum leaves while the peer computes the next step.
double predictedWithHandOvers(const MemberLines& lines, const std::vector<int64_t>& batches, double below, double h);

// The best split over the ranks marked in `in` (the rest get 0): the min-max over them with each peer's hand-overs in
// its fixed cost, from the plan of the split without them, then once more from the plan of that split. A set whose
// memory caps cannot hold `total` (or with more members than samples) predicts an infinite step and no split.
MembershipChoice bestSplitOver(const MemberLines& lines, const std::vector<bool>& in, int64_t total, double below,
                               double h);

// From every rank in, leaves out the slowest k of the ranks that hand a gradient over, for the k whose leaving
// shortens the predicted step most, and again from the split that gives, while it shortens; never the last rank with
// a share. h = 0 (no hand-over measured yet) still leaves out a rank whose own line alone outlasts the others' step.
// At most 33 sets a pass (the slowest 1 to 32, and every client) and 4 passes: a decision over thousands of workers
// stays bounded.
MembershipChoice chooseMembers(const MemberLines& lines, int64_t total, double below, double h);

// One line per rank that leaves the exchange or comes back between two splits, for the log.
std::vector<std::string> membershipChanges(const Split& before, const Split& after);

}  // namespace balancenet::orchestrator
