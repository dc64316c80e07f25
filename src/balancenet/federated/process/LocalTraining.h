// LocalTraining: what a federated client does with a task: local SGD on its own shard, paced like an
// emulated node, stopped at the task's deadline. Exposed so that tests can rebuild a client's batches.
#pragma once
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include <ATen/core/Tensor.h>

#include "balancenet/data/Dataset.h"
#include "balancenet/emulation/Pacing.h"
#include "balancenet/federated/process/UpdateMessage.h"
#include "balancenet/models/Network.h"
#include "balancenet/objective/Objective.h"

namespace balancenet::federated {

// A client's shard of the training set: the samples at its indices, renumbered from 0.
struct ClientShard {
  std::shared_ptr<const data::Dataset> data;
  int64_t size() const { return data->size(); }
};
ClientShard takeShard(std::shared_ptr<const data::Dataset> train, const std::vector<int64_t>& indices);

// The local batches of one (round, client): a permutation of the shard drawn from seededGenerator(seed,
// round * clients + client), taken in order, drawn again (same generator) when used up. A function of
// those numbers only, so a run (and a resumed run) trains on the same samples.
class LocalBatches {
 public:
  LocalBatches(uint64_t seed, int64_t round, int clients, int client, int64_t shardSize, int64_t batch);
  std::vector<int64_t> next();  // shard positions of the next batch: min(batch, shardSize) distinct ones
  // The same batch as training draws: each position with its augmentation seed, a function of (seed,
  // round, client, pass over the shard, position) only, so --augment draws the same on a resumed run.
  std::vector<data::Draw> nextDraws();

 private:
  void reshuffle();
  std::mt19937_64 gen_;
  uint64_t drawSeed_;
  int64_t passes_ = -1;  // reshuffles so far: the shard's "epoch"
  std::vector<int64_t> order_;
  size_t used_ = 0;
  int64_t batch_;
};

// --node-speed / --slowdown of this client: each step lasts max(real, samples / speed) or s x real.
struct ClientPace {
  std::optional<emulation::PaceMode> mode;  // none: full speed
  double factor = 1;
};

// Heavy-ball momentum as torch.optim.SGD has it (no dampening): buffer = momentum x buffer + gradient (the
// gradient itself when `buffer` is undefined: a task's first step); returns the step direction, the buffer.
at::Tensor momentumDirection(const at::Tensor& gradient, at::Tensor& buffer, double momentum);

struct LocalWork {
  int64_t doneSteps = 0;
  int64_t samples = 0;
  double computeSeconds = 0;  // paced
  bool stoppedEarly = false;  // the deadline came first
};

// Runs `task.localSteps` steps of SGD with step size task.lr on the mean loss of each batch, plus
// FedProx's proximal term (task.mu / 2) ||w - w_start||^2 over the parameters when mu > 0; with
// task.momentum rho > 0, heavy-ball momentum as torch.optim.SGD has it (b = rho b + g; w -= lr b), the buffer
// starting at 0 for every task (the client keeps nothing between rounds). With a deadline,
// it stops before a step that would end after it (the step's expected length: the last step's, at least
// the pace), so what it sends arrives by then.
// Batches are the shard's training draws (augmented where the data augments).
LocalWork trainLocally(models::Network& net, const ClientShard& shard, const objective::Objective& objective,
                       const MessageHeader& task, LocalBatches& batches, const ClientPace& pace);

}  // namespace balancenet::federated
