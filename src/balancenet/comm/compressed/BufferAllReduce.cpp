// The factory, --compress-warmup's exact steps, and the check that a powersgd rank compresses something.
#include "balancenet/comm/compressed/BufferAllReduce.h"

#include <fmt/format.h>

#include "balancenet/comm/compressed/ExactAllReduce.h"
#include "balancenet/comm/compressed/Int8AllReduce.h"
#include "balancenet/comm/compressed/PowerSgdAllReduce.h"
#include "balancenet/compression/PowerSgd.h"
#include "balancenet/core/Error.h"

namespace balancenet::comm {

namespace {

// The first `steps` steps exact, the rest compressed; bytes and phases are the last step's.
class WarmedUpAllReduce : public BufferAllReduce {
 public:
  WarmedUpAllReduce(std::unique_ptr<BufferAllReduce> exact, std::unique_ptr<BufferAllReduce> compressed, int64_t steps)
      : exact_(std::move(exact)), compressed_(std::move(compressed)), steps_(steps) {}
  void beginStep(int64_t step) override { active_ = step < steps_ ? exact_.get() : compressed_.get(); }
  void start(const at::Tensor& buffer) override { active_->start(buffer); }
  void finish(const at::Tensor& buffer, Timeline* timeline, const std::string& label) override {
    active_->finish(buffer, timeline, label);
  }
  void abandon() override { active_->abandon(); }
  int64_t wireBytes() const override { return active_->wireBytes(); }
  int64_t phases() const override { return active_->phases(); }
  int64_t wireBytesOf(const std::vector<int64_t>& shape) const override { return active_->wireBytesOf(shape); }
  std::string describe() const override {
    return fmt::format("{} after {} exact step(s)", compressed_->describe(), steps_);
  }
  // The compressed exchange's: untouched during the exact steps.
  std::vector<at::Tensor> saveState() const override { return compressed_->saveState(); }
  void loadState(const std::vector<at::Tensor>& state) override { compressed_->loadState(state); }

 private:
  std::unique_ptr<BufferAllReduce> exact_, compressed_;
  int64_t steps_;
  BufferAllReduce* active_ = exact_.get();
};

std::unique_ptr<BufferAllReduce> makeCompressed(Collectives& comm, const compression::CompressionOptions& options,
                                                const std::vector<BufferPart>& parts, int64_t numel,
                                                const at::TensorOptions& device) {
  using compression::GradCompression;
  switch (options.kind) {
    case GradCompression::PowerSgd:
      return std::make_unique<PowerSgdAllReduce>(comm, options.rank, parts, device, options.errorFeedback);
    case GradCompression::Int8:
      return std::make_unique<Int8AllReduce>(comm, numel, device, options.errorFeedback);
    case GradCompression::None:
      return std::make_unique<ExactAllReduce>(comm, numel);
    default:
      return std::make_unique<CastAllReduce>(comm, options.kind, numel, options.errorFeedback);
  }
}

}  // namespace

int64_t numelOf(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::vector<BufferPart> partsOf(const ParameterList& params) {
  std::vector<BufferPart> parts;
  for (size_t i = 0; i < params.size(); ++i) parts.push_back({static_cast<int>(i), params[i].tensor.sizes().vec()});
  return parts;
}

std::unique_ptr<BufferAllReduce> makeBufferAllReduce(Collectives& comm, const compression::CompressionOptions& options,
                                                     const std::vector<BufferPart>& parts,
                                                     const at::TensorOptions& device) {
  int64_t numel = 0;
  for (const auto& p : parts) numel += numelOf(p.shape);
  auto compressed = makeCompressed(comm, options, parts, numel, device);
  if (!compression::compresses(options) || options.warmupSteps <= 0) return compressed;
  return std::make_unique<WarmedUpAllReduce>(std::make_unique<ExactAllReduce>(comm, numel), std::move(compressed),
                                             options.warmupSteps);
}

bool compressesSome(const compression::CompressionOptions& options, const std::vector<BufferPart>& parts) {
  if (options.kind != compression::GradCompression::PowerSgd) return true;
  for (const auto& p : parts) {
    if (p.shape.size() < 2) continue;
    const auto [rows, cols] = compression::matrixShape(p.shape);
    if (compression::compressesMatrix(rows, cols, options.rank)) return true;
  }
  return false;
}

void checkCompressible(const compression::CompressionOptions& options, const std::vector<BufferPart>& parts) {
  if (compressesSome(options, parts)) return;
  int largest = 0;  // the largest rank that factors some matrix
  for (const auto& p : parts) {
    if (p.shape.size() < 2) continue;
    const auto [rows, cols] = compression::matrixShape(p.shape);
    for (int r = largest + 1; compression::compressesMatrix(rows, cols, r); ++r) largest = r;
  }
  throw UsageError(
      largest == 0
          ? fmt::format("--grad-compress {}: this model has no matrix to factor", gradCompressionName(options))
          : fmt::format("--grad-compress powersgd:{} factors no matrix of this model (its matrices are too small "
                        "for that rank): choose a rank of at most {}",
                        options.rank, largest));
}

}  // namespace balancenet::comm
