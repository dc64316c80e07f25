// CompressedBuckets: the Python package's DDP buckets summed in fewer bits (bn.attach(..., grad_compress=)), by the
// C++ trainer's --grad-compress exchanges (comm/compressed/), so the Python hook has no second copy of them. Each
// bucket layout (its parameters, in order) keeps its own exchange and error feedback, so a residual always comes back
// to the parameters it was taken from; DDP rebuilds its buckets once, after its first step, and the new layouts start
// with no residual.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "balancenet/comm/compressed/BufferAllReduce.h"
#include "balancenet/compression/GradCompression.h"

namespace balancenet::session {

class CompressedBuckets {
 public:
  // `model`: every parameter, for the check that `options` compresses something of it (UsageError naming
  // grad_compress otherwise: powersgd at a rank no matrix is worth factoring at).
  CompressedBuckets(comm::Communicator& comm, compression::CompressionOptions options,
                    const std::vector<comm::BufferPart>& model);
  CompressedBuckets(const CompressedBuckets&) = delete;
  CompressedBuckets& operator=(const CompressedBuckets&) = delete;

  // Starts the sum over the group of this rank's `buffer` (float32, contiguous: `bucket`'s parameters end to end),
  // at training step `step` (the warm-up's exact steps). Every rank starts the same buckets in the same order.
  void start(const std::vector<comm::BufferPart>& bucket, const at::Tensor& buffer, int64_t step);
  // Waits for every sum started since the last finish, in start order: each buffer then holds the group's sum.
  void finish();
  // Gives up the started sums (a failed collective): waits for what is in flight.
  void abandon();

  // What the wire carries ("int8 with error feedback ..."), for the log.
  std::string describe() const;

 private:
  comm::Communicator& comm_;
  compression::CompressionOptions options_;
  std::map<std::vector<int>, std::unique_ptr<comm::BufferAllReduce>> byLayout_;
  std::vector<std::pair<comm::BufferAllReduce*, at::Tensor>> started_;
};

}  // namespace balancenet::session
