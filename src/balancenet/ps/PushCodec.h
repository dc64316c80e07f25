// PushCodec: a worker's gradient shard in its push to a parameter server, float32 or in fewer bits (--grad-compress
// bf16, fp16 or int8 with --comm ps). The worker encodes with error feedback (what the wire lost goes into its next
// push), the server decodes each push before its float32 sum; the replies stay float32, since they carry the
// parameters themselves. PowerSGD is not offered: its factors need one Q agreed by every worker for the whole
// matrix, and a server sees one worker's slice of a flat shard at a time.
#pragma once
#include <cstdint>

#include <ATen/core/Tensor.h>

#include "balancenet/compression/ErrorFeedback.h"
#include "balancenet/compression/GradCompression.h"

namespace balancenet::ps {

// UsageError, naming the flag, where the pushes cannot carry `options`: powersgd, and --compress-warmup (a push's size
// is fixed for the whole run). The command line's check and the codec's are this one.
void checkPushCompression(const compression::CompressionOptions& options);

class PushCodec {
 public:
  // A codec for shards of `elements` floats; UsageError for a kind the servers cannot take (powersgd).
  PushCodec(compression::CompressionOptions options, int64_t elements);

  // Floats a push's payload needs after the header: the shard's bytes in the wire type, whole floats.
  int64_t payloadFloats() const;
  // Worker: `values` (float32, the shard) into `payload` (payloadFloats() floats), its residual updated.
  void encode(const at::Tensor& values, const at::Tensor& payload);
  // Server: the shard `payload` carries, float32: a view of the payload itself when it travels float32 (no copy on
  // the uncompressed path), else decoded into `scratch` (float32, the shard) and `scratch` returned.
  at::Tensor decode(const at::Tensor& payload, const at::Tensor& scratch) const;
  // The worker's residual (checkpoints); float32, the shard's size.
  at::Tensor residual() const;
  void restore(const at::Tensor& residual);

 private:
  compression::CompressionOptions options_;
  int64_t elements_;
  compression::ErrorFeedback feedback_;  // bf16 and fp16
  at::Tensor residual_;                  // int8
};

}  // namespace balancenet::ps
