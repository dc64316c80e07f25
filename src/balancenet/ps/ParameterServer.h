// ParameterServer: holds one shard of the parameters, applies the workers' gradients, answers pulls.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>

#include "balancenet/comm/group/Communicator.h"
#include "balancenet/compression/GradCompression.h"
#include "balancenet/ps/PsMessage.h"
#include "balancenet/ps/PushCodec.h"
#include "balancenet/ps/ShardLayout.h"
#include "balancenet/trainer/OptimizerFactory.h"

namespace torch::optim {
class Optimizer;
}

namespace balancenet::ps {

struct ServerOptions {
  int workers = 1;
  int index = 0;  // this server's number; its rank in the group is serverRank(workers, index)
  ShardRange shard;
  trainer::OptimizerOptions optimizer;
  int staleness = 0;                            // 0: BSP; s > 0: SSP with a bound of s steps
  int64_t steps = 0;                            // every worker pushes this many steps
  compression::CompressionOptions compression;  // the pushes' wire type (ps/PushCodec.h), as the workers'
};

struct ServerReport {
  int64_t pushes = 0;
  // Largest (step a worker was let start) - (steps the slowest worker had pushed) over all pulls answered.
  int64_t largestClockGap = 0;
};

// Protocol (see docs/communication.md): worker 0 sends the start parameters; each step every worker
// pushes its gradient share and waits for the reply carrying the parameters of its next step.
// BSP: the server waits for every push of the step, sums them and applies one optimiser step.
// SSP: each push is applied on arrival (one optimiser step per push); a worker whose next step is c
// gets its reply once the slowest worker has pushed at least c - staleness steps. The last pull waits
// for everyone, so all workers end with the same final parameters.
class ParameterServer {
 public:
  ParameterServer(comm::Communicator& group, ServerOptions options);
  ~ParameterServer();
  ParameterServer(const ParameterServer&) = delete;
  ParameterServer& operator=(const ParameterServer&) = delete;

  // Serves until every worker has pulled the parameters after its last step.
  ServerReport run();
  at::Tensor shard() const { return shard_; }  // this server's parameters

 private:
  void receiveStartParameters();
  void runSynchronous();
  void runStaleSynchronous();
  void apply(const at::Tensor& gradient, double lr);
  void reply(int worker, int64_t step, int64_t slowestClock, const PsHeader& scalarsFrom);
  PsHeader checkedPush(const PsMessage& message, int worker, int64_t expectedStep) const;

  comm::Communicator& group_;
  ServerOptions options_;
  at::Tensor shard_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::vector<PsMessage> replies_;
  std::vector<comm::PendingWork> sends_;  // the reply in flight to each worker
  ServerReport report_;
};

}  // namespace balancenet::ps
