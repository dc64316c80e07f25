// BufferAllReduce: the sum over the group of one float32 buffer of gradients (a bucket, the flat gradient), exact or
// compressed by --grad-compress. Split in two so the buckets can start it from a backward hook and finish it after
// backward: start() takes this rank's share, finish() leaves the group's sum in the same buffer. Every rank starts
// and finishes its buffers in the same order (c10d's rule for collectives); a finish may run collectives of its own
// (PowerSGD's second factor, int8's all-gather), so the callers finish in start order too.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "balancenet/comm/GradientSync.h"
#include "balancenet/compression/GradCompression.h"

namespace balancenet {
class Timeline;
}

namespace balancenet::comm {
class Collectives;

// One tensor of the buffer, in buffer order (they lie end to end): PowerSGD compresses each matrix by itself.
struct BufferPart {
  int parameter = 0;  // its index in the model's parameter list: seeds its PowerSGD start, layout-free
  std::vector<int64_t> shape;
};

// The elements of a tensor of `shape`.
int64_t numelOf(const std::vector<int64_t>& shape);
// Bytes in MiB, for the timeline's labels.
inline double megabytes(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }
// Every parameter of `params` as a part, in list order.
std::vector<BufferPart> partsOf(const ParameterList& params);

class BufferAllReduce {
 public:
  virtual ~BufferAllReduce() = default;
  // The training step about to start (--compress-warmup's exact steps).
  virtual void beginStep(int64_t /*step*/) {}
  // Starts the sum of `buffer` (float32, contiguous, the parts end to end); leave it untouched until finish().
  virtual void start(const at::Tensor& buffer) = 0;
  // Waits for the sum and leaves it in `buffer`, drawing the waits on `timeline` (when not null) under `label`.
  virtual void finish(const at::Tensor& buffer, Timeline* timeline, const std::string& label) = 0;
  // A step given up after start() (an exception): waits for what is in flight, starts nothing more.
  virtual void abandon() = 0;
  // Bytes this rank sends (and as many it receives) for one sum, counted as the ring counts them
  // (ringAllReduceWireBytes), so every exchange's byte columns compare; and the dependent phases it waits on.
  virtual int64_t wireBytes() const = 0;
  virtual int64_t phases() const = 0;
  // The part of wireBytes() that one tensor of `shape` costs (layers.csv).
  virtual int64_t wireBytesOf(const std::vector<int64_t>& shape) const = 0;
  // What explain() says of the wire: "bf16 with error feedback", ...
  virtual std::string describe() const = 0;
  // The error feedback (and PowerSGD's Q): tensors whose layout is fixed at construction; exact: none.
  virtual std::vector<at::Tensor> saveState() const { return {}; }
  // Takes a saveState() of this layout (the caller checked it: sameLayout), copying it in.
  virtual void loadState(const std::vector<at::Tensor>& /*state*/) {}
};

// The exact sum (a ring all-reduce), or the compressed one `options` name, its first options.warmupSteps steps
// exact. `device`: where the buffer lives (PowerSGD's and int8's working tensors go there too).
std::unique_ptr<BufferAllReduce> makeBufferAllReduce(Collectives& comm, const compression::CompressionOptions& options,
                                                     const std::vector<BufferPart>& parts,
                                                     const at::TensorOptions& device);

// Whether `options` compresses something of the model `parts`: false only for powersgd at a rank that no matrix is
// worth factoring at.
bool compressesSome(const compression::CompressionOptions& options, const std::vector<BufferPart>& parts);

// UsageError, naming --grad-compress, where `options` cannot compress anything of the model `parts` (all its
// parameters): powersgd at a rank that no matrix is worth factoring at.
void checkCompressible(const compression::CompressionOptions& options, const std::vector<BufferPart>& parts);

}  // namespace balancenet::comm
