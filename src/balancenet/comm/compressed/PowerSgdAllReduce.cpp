#include "balancenet/comm/compressed/PowerSgdAllReduce.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "balancenet/comm/GradientSync.h"
#include "balancenet/compression/PowerSgd.h"

namespace balancenet::comm {

namespace {

// Seeds initialQ per parameter: the same start whatever the bucket layout, in every process.
constexpr uint64_t kSeed = 0x9e3779b97f4a7c15ULL;

}  // namespace

PowerSgdAllReduce::PowerSgdAllReduce(Collectives& comm, int rank, const std::vector<BufferPart>& parts,
                                     const at::TensorOptions& device, bool errorFeedback)
    : comm_(comm), rank_(rank), errorFeedback_(errorFeedback) {
  int64_t offset = 0, wholeNumel = 0;
  for (const auto& part : parts) {
    const int64_t numel = numelOf(part.shape);
    const auto [rows, cols] = compression::matrixShape(part.shape);
    if (part.shape.size() >= 2 && compression::compressesMatrix(rows, cols, rank)) {
      Matrix m;
      m.offset = offset;
      m.rows = rows;
      m.cols = cols;
      m.q = compression::initialQ(cols, rank, kSeed + static_cast<uint64_t>(part.parameter), device);
      m.compensated = at::empty({rows, cols}, device.dtype(at::kFloat));
      m.residual = at::zeros({rows, cols}, device.dtype(at::kFloat));
      matrices_.push_back(std::move(m));
    } else {
      whole_.push_back({offset, numel, wholeNumel});
      wholeNumel += numel;
    }
    offset += numel;
  }
  int64_t pNumel = wholeNumel, qNumel = 0;
  for (auto& m : matrices_) {
    m.pOffset = pNumel;
    m.qOffset = qNumel;
    pNumel += m.rows * rank;
    qNumel += m.cols * rank;
  }
  first_ = at::zeros({pNumel}, device.dtype(at::kFloat));
  second_ = at::zeros({qNumel}, device.dtype(at::kFloat));
}

void PowerSgdAllReduce::start(const at::Tensor& buffer) {
  at::NoGradGuard noGrad;
  for (const auto& w : whole_) first_.narrow(0, w.at, w.numel).copy_(buffer.narrow(0, w.offset, w.numel));
  for (auto& m : matrices_) {
    at::add_out(m.compensated, buffer.narrow(0, m.offset, m.rows * m.cols).view({m.rows, m.cols}), m.residual);
    auto p = first_.narrow(0, m.pOffset, m.rows * rank_).view({m.rows, rank_});
    at::mm_out(p, m.compensated, m.q);
  }
  work_ = comm_.allreduceSumAsync(first_);
}

void PowerSgdAllReduce::finish(const at::Tensor& buffer, Timeline* timeline, const std::string& label) {
  at::NoGradGuard noGrad;
  work_.wait(timeline, "wait " + label, fmt::format("all-reduce {} P ({:.2f} MB)", label, megabytes(first_.nbytes())));
  for (const auto& w : whole_) buffer.narrow(0, w.offset, w.numel).copy_(first_.narrow(0, w.at, w.numel));
  if (matrices_.empty()) return;
  for (auto& m : matrices_) {
    auto p = first_.narrow(0, m.pOffset, m.rows * rank_).view({m.rows, rank_});
    compression::orthonormalizeColumns(p);
    auto q = second_.narrow(0, m.qOffset, m.cols * rank_).view({m.cols, rank_});
    at::mm_out(q, m.compensated.t(), p);
    // What the projection onto orth(P) lost of this rank's own share: e = C - P (C^T P)^T.
    at::addmm_out(m.residual, m.compensated, p, q.t(), /*beta=*/1, /*alpha=*/-1);
    if (!errorFeedback_) m.residual.zero_();
  }
  auto second = comm_.allreduceSumAsync(second_);
  second.wait(timeline, "wait " + label + " Q",
              fmt::format("all-reduce {} Q ({:.2f} MB)", label, megabytes(second_.nbytes())));
  for (auto& m : matrices_) {
    const auto p = first_.narrow(0, m.pOffset, m.rows * rank_).view({m.rows, rank_});
    const auto q = second_.narrow(0, m.qOffset, m.cols * rank_).view({m.cols, rank_});
    m.q.copy_(q);  // the next step's warm start, the same on every rank
    auto out = buffer.narrow(0, m.offset, m.rows * m.cols).view({m.rows, m.cols});
    at::mm_out(out, p, q.t());
  }
}

int64_t PowerSgdAllReduce::wireBytes() const {
  return ringAllReduceWireBytes(first_.nbytes(), comm_.size()) +
         (matrices_.empty() ? 0 : ringAllReduceWireBytes(second_.nbytes(), comm_.size()));
}

int64_t PowerSgdAllReduce::phases() const { return ringAllReducePhases(comm_.size()) * (matrices_.empty() ? 1 : 2); }

int64_t PowerSgdAllReduce::wireBytesOf(const std::vector<int64_t>& shape) const {
  const auto [rows, cols] = compression::matrixShape(shape);
  const int64_t numbers =
      shape.size() >= 2 && compression::compressesMatrix(rows, cols, rank_) ? (rows + cols) * rank_ : rows * cols;
  return ringAllReduceWireBytes(numbers * static_cast<int64_t>(sizeof(float)), comm_.size());
}

std::vector<at::Tensor> PowerSgdAllReduce::saveState() const {
  std::vector<at::Tensor> out;
  for (const auto& m : matrices_) out.insert(out.end(), {m.q, m.residual});
  return out;
}

void PowerSgdAllReduce::loadState(const std::vector<at::Tensor>& state) {
  for (size_t i = 0; i < matrices_.size(); ++i) {
    matrices_[i].q.copy_(state.at(2 * i));
    matrices_[i].residual.copy_(state.at(2 * i + 1));
  }
}

std::string PowerSgdAllReduce::describe() const {
  return fmt::format("powersgd rank {} {} ({} matrices as factors, {} tensors whole)", rank_,
                     compression::feedbackName(errorFeedback_), matrices_.size(), whole_.size());
}

}  // namespace balancenet::comm
