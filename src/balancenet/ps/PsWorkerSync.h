// PsWorkerSync: a worker's side of the parameter servers: push the gradient share, pull the parameters.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "balancenet/comm/GradientSync.h"
#include "balancenet/comm/group/Communicator.h"
#include "balancenet/core/Timeline.h"
#include "balancenet/ps/PsMessage.h"
#include "balancenet/ps/ShardLayout.h"

namespace balancenet::ps {

// synchronize() pushes this rank's gradient share to every server and waits for the parameters of
// the next step, which it writes into the model: the servers run the optimiser, so updatesParameters()
// is true. The first call on worker 0 sends the start parameters (those of the trainer's start-up
// broadcast). Scalars: under BSP the servers return the sum over the workers (the global loss); under
// SSP there is no step-wide sum, so they become this worker's own estimate: its total scaled by B / b.
class PsWorkerSync : public comm::GradientSync {
 public:
  // `group` is the workers + servers group (joinPsGroup); `workers` ranks of it are workers.
  PsWorkerSync(std::unique_ptr<comm::Communicator> group, comm::ParameterList params, int workers, int staleness);
  ~PsWorkerSync() override;

  comm::SyncStats synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars,
                              const comm::SyncContext& context) override;
  bool updatesParameters() const override { return true; }
  std::string explain() const override;

  // Largest lead over the slowest worker this worker was let start a step with (0 under BSP).
  int64_t largestClockGap() const { return largestGap_; }

 private:
  int64_t sendStartParameters();
  // Pushes to every server and waits for every reply; a lost server is named in the RuntimeFailure.
  void exchange(const PsHeader& header, const std::vector<at::Tensor>& grads, Timeline* timeline);
  void pack(PsMessage& message, int server, const std::vector<at::Tensor>& tensors) const;
  void unpack(const PsMessage& message, int server);
  void takeScalars(at::Tensor& scalars, const comm::SyncContext& context) const;

  std::unique_ptr<comm::Communicator> group_;
  comm::ParameterList params_;
  int workers_;
  int staleness_;
  std::vector<ShardRange> shards_;
  std::vector<std::vector<ShardPiece>> pieces_;  // per server
  std::vector<PsMessage> pushes_, replies_;      // per server
  std::vector<comm::LayerTraffic> traffic_;      // per layer, the same every step
  bool started_ = false;
  int64_t largestGap_ = 0;
};

}  // namespace balancenet::ps
