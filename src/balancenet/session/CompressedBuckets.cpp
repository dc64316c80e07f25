// One exchange per bucket layout, started in DDP's order and finished together after backward's last bucket.
#include "balancenet/session/CompressedBuckets.h"

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::session {

CompressedBuckets::CompressedBuckets(comm::Communicator& comm, compression::CompressionOptions options,
                                     const std::vector<comm::BufferPart>& model)
    : comm_(comm), options_(options) {
  comm::checkCompressible(options_, model);
}

void CompressedBuckets::start(const std::vector<comm::BufferPart>& bucket, const at::Tensor& buffer, int64_t step) {
  std::vector<int> layout;
  int64_t numel = 0;
  for (const auto& part : bucket) {
    layout.push_back(part.parameter);
    numel += comm::numelOf(part.shape);
  }
  if (buffer.numel() != numel || !buffer.is_contiguous() || buffer.scalar_type() != at::kFloat)
    throw UsageError(
        fmt::format("a compressed gradient bucket must be contiguous float32 of its parameters' {} "
                    "elements, got {} of {}",
                    numel, buffer.numel(), std::string(c10::toString(buffer.scalar_type()))));
  auto& sum = byLayout_[layout];
  if (!sum) sum = comm::makeBufferAllReduce(comm_, options_, bucket, buffer.options());
  sum->beginStep(step);
  sum->start(buffer);
  started_.emplace_back(sum.get(), buffer);
}

void CompressedBuckets::finish() {
  auto started = std::move(started_);
  started_.clear();
  for (size_t i = 0; i < started.size(); ++i) {
    try {
      started[i].first->finish(started[i].second, nullptr, "");
    } catch (...) {
      for (size_t j = i + 1; j < started.size(); ++j) started[j].first->abandon();
      throw;
    }
  }
}

void CompressedBuckets::abandon() {
  for (auto& [sum, buffer] : started_) sum->abandon();
  started_.clear();
}

std::string CompressedBuckets::describe() const {
  return fmt::format(
      "{}, error feedback per DDP bucket{}", compression::gradCompressionName(options_),
      options_.warmupSteps > 0 ? fmt::format(", exact for the first {} steps", options_.warmupSteps) : std::string());
}

}  // namespace balancenet::session
