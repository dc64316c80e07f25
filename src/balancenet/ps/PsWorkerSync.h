// PsWorkerSync: a worker's side of the parameter servers: push the gradient share, pull the parameters.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "balancenet/comm/GradientSync.h"
#include "balancenet/comm/group/Communicator.h"
#include "balancenet/compression/GradCompression.h"
#include "balancenet/core/Timeline.h"
#include "balancenet/ps/PsMessage.h"
#include "balancenet/ps/PushCodec.h"
#include "balancenet/ps/ShardLayout.h"

namespace balancenet::ps {

// synchronize() pushes this rank's gradient share to every server and waits for the parameters of
// the next step, which it writes into the model: the servers run the optimiser, so updatesParameters()
// is true. The first call on worker 0 sends the start parameters (those of the trainer's start-up
// broadcast). Scalars: under BSP the servers return the sum over the workers (the global loss); under
// SSP there is no step-wide sum, so they become this worker's own estimate: its total scaled by B / b.
class PsWorkerSync : public comm::GradientSync {
 public:
  // `group` is the workers + servers group (joinPsGroup); `workers` ranks of it are workers. `compression`: the
  // pushes' wire type (ps/PushCodec.h; the servers must be given the same).
  PsWorkerSync(std::unique_ptr<comm::Communicator> group, comm::ParameterList params, int workers, int staleness,
               compression::CompressionOptions compression = {});
  ~PsWorkerSync() override;

  comm::SyncStats synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars,
                              const comm::SyncContext& context) override;
  bool updatesParameters() const override { return true; }
  std::string explain() const override;
  // The pushes' error feedback, one residual per server (none when they travel float32).
  std::vector<at::Tensor> saveState() const override;
  bool loadState(const std::vector<at::Tensor>& state) override;

  // Largest lead over the slowest worker this worker was let start a step with (0 under BSP).
  int64_t largestClockGap() const { return largestGap_; }

 private:
  int64_t sendStartParameters();
  // Pushes to every server and waits for every reply; a lost server is named in the RuntimeFailure.
  void exchange(const PsHeader& header, const std::vector<at::Tensor>& grads, Timeline* timeline);
  // This rank's slices of `tensors` for `server` into `shard` (float32, the server's range).
  void pack(const at::Tensor& shard, int server, const std::vector<at::Tensor>& tensors) const;
  // The step's push to `server`: the gradient's shard, in the pushes' wire type.
  void packPush(int server, const std::vector<at::Tensor>& grads);
  void unpack(const PsMessage& message, int server);
  void takeScalars(at::Tensor& scalars, const comm::SyncContext& context) const;

  std::unique_ptr<comm::Communicator> group_;
  comm::ParameterList params_;
  int workers_;
  int staleness_;
  std::vector<ShardRange> shards_;
  std::vector<std::vector<ShardPiece>> pieces_;  // per server
  compression::CompressionOptions compression_;
  std::vector<PushCodec> codecs_;            // per server
  std::vector<at::Tensor> shardValues_;      // per server: the float32 shard a compressed push encodes
  std::vector<PsMessage> pushes_, replies_;  // per server
  std::vector<comm::LayerTraffic> traffic_;  // per layer, the same every step
  bool started_ = false;
  int64_t largestGap_ = 0;
};

}  // namespace balancenet::ps
