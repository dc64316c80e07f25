// BucketedAllReduceSync: wait-free backprop. Gradients travel in buckets, in reverse layer order, each
// bucket's all-reduce started from an autograd hook as soon as its last gradient is ready.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "balancenet/comm/GradientSync.h"
#include "balancenet/comm/compressed/BufferAllReduce.h"
#include "balancenet/comm/group/Collectives.h"
#include "balancenet/core/Timeline.h"

namespace balancenet::comm {

struct BucketOptions {
  double bucketMb = 25;      // cap of every bucket but the first (DDP's bucket_cap_mb)
  double firstBucketMb = 1;  // the first bucket (the last layers) is small so sending starts early, as in DDP
  bool overlap = true;       // false: every bucket is sent after backward (for comparison)
  // --grad-compress: how each bucket crosses the wire (compressed/BufferAllReduce.h), with its own error feedback.
  compression::CompressionOptions compression;
};

// Backward produces gradients from the last layer to the first, so buckets are filled in that order:
// layer l's gradients travel while layers < l still compute. Buckets are started in index order on
// every rank (c10d needs the same order everywhere); small tensors share a bucket, so per-message
// latency is paid once per bucket. Exactness is the flat all-reduce's: a sum of each rank's share.
class BucketedAllReduceSync : public GradientSync {
 public:
  BucketedAllReduceSync(Collectives& comm, ParameterList params, BucketOptions options);
  ~BucketedAllReduceSync() override;
  BucketedAllReduceSync(const BucketedAllReduceSync&) = delete;
  BucketedAllReduceSync& operator=(const BucketedAllReduceSync&) = delete;

  void beginStep(const SyncContext& context) override;
  SyncStats synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars, const SyncContext& context) override;
  std::string explain() const override;
  // Every bucket's exchange's state, in bucket order.
  std::vector<at::Tensor> saveState() const override;
  bool loadState(const std::vector<at::Tensor>& state) override;

  // Parameter indices (into the constructor's list) of each bucket, in sending order.
  std::vector<std::vector<int>> bucketLayout() const;
  // How many buckets the last step started before backward had finished (the overlap actually won).
  int bucketsStartedDuringBackward() const { return startedEarly_; }

 private:
  struct Bucket {
    std::vector<int> params;
    std::vector<int64_t> offsets;               // of each parameter in the buffer
    at::Tensor buffer;                          // float32, filled by the hooks, summed in place
    std::unique_ptr<BufferAllReduce> exchange;  // exact, or compressed with its own error feedback
    int missing = 0;                            // parameters whose gradient has not arrived this step
    bool started = false;
  };

  void onGradient(int param, const at::Tensor& grad);
  void startReadyBuckets();  // in order, as long as the next bucket is complete
  void startBucket(size_t b);
  std::vector<std::vector<at::Tensor>> bucketStates() const;

  Collectives& comm_;
  ParameterList params_;
  BucketOptions options_;
  std::vector<Bucket> buckets_;
  std::vector<int> bucketOf_;  // parameter -> bucket
  std::vector<bool> arrived_;  // parameter -> gradient copied this step
  std::vector<unsigned> hookIds_;
  size_t nextToStart_ = 0;
  bool armed_ = false;  // between beginStep() and synchronize()
  Timeline* timeline_ = nullptr;
  int startedEarly_ = 0;
  LayerTrafficCache traffic_;  // per layer: the same every step but when --compress-warmup ends
};

}  // namespace balancenet::comm
