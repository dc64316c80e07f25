#include "balancenet/comm/compressed/Int8AllReduce.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "balancenet/comm/GradientSync.h"
#include "balancenet/compression/Int8Quantizer.h"

namespace balancenet::comm {

Int8AllReduce::Int8AllReduce(Collectives& comm, int64_t numel, const at::TensorOptions& device, bool errorFeedback)
    : comm_(comm), numel_(numel), errorFeedback_(errorFeedback) {
  const int64_t world = comm.size();
  chunk_ = ((numel + world - 1) / world + 3) / 4 * 4;
  const auto floats = device.dtype(at::kFloat), bytes = device.dtype(at::kChar);
  padded_ = at::zeros({world * chunk_}, floats);
  residual_ = at::zeros({world * chunk_}, floats);
  serverResidual_ = at::zeros({chunk_}, floats);
  send_ = at::zeros({world, chunk_ + 4}, bytes);
  receive_ = at::zeros({world, chunk_ + 4}, bytes);
  sum_ = at::zeros({chunk_}, floats);
  decoded_ = at::zeros({chunk_}, floats);
  own_ = at::zeros({1, chunk_ + 4}, bytes);
  for (int64_t r = 0; r < world; ++r) gathered_.push_back(at::zeros({1, chunk_ + 4}, bytes));
}

void Int8AllReduce::start(const at::Tensor& buffer) {
  padded_.narrow(0, 0, numel_).copy_(buffer);
  for (int64_t r = 0; r < comm_.size(); ++r) {
    auto codes = codesOf(send_, r);
    const float scale = compression::quantizeInt8WithFeedback(padded_.narrow(0, r * chunk_, chunk_),
                                                              residual_.narrow(0, r * chunk_, chunk_), codes);
    scaleOf(send_, r).fill_(scale);
  }
  if (!errorFeedback_) residual_.zero_();
  // What leaves this rank: every chunk but its own.
  work_ = comm_.alltoallAsync(send_, receive_, (comm_.size() - 1) * send_[0].nbytes());
}

void Int8AllReduce::finish(const at::Tensor& buffer, Timeline* timeline, const std::string& label) {
  work_.wait(timeline, "wait " + label,
             fmt::format("all-to-all {} ({:.2f} MB as int8)", label, megabytes(send_.nbytes())));
  // This rank's chunk: every rank's codes decoded and summed in rank order, so the sum is the same bits whoever
  // computes it; then sent once more as int8.
  sum_.zero_();
  for (int64_t r = 0; r < comm_.size(); ++r) {
    compression::dequantizeInt8(codesOf(receive_, r), scaleOf(receive_, r).item<float>(), decoded_);
    sum_.add_(decoded_);
  }
  auto codes = codesOf(own_, 0);
  scaleOf(own_, 0).fill_(compression::quantizeInt8WithFeedback(sum_, serverResidual_, codes));
  if (!errorFeedback_) serverResidual_.zero_();
  auto gather = comm_.allgatherAsync(own_, gathered_, (comm_.size() - 1) * own_.nbytes());
  gather.wait(timeline, "wait " + label + " gather",
              fmt::format("all-gather {} ({:.2f} MB as int8)", label, megabytes(own_.nbytes() * comm_.size())));
  for (int64_t r = 0; r < comm_.size(); ++r) {
    auto out = padded_.narrow(0, r * chunk_, chunk_);
    compression::dequantizeInt8(codesOf(gathered_[r], 0), scaleOf(gathered_[r], 0).item<float>(), out);
  }
  buffer.copy_(padded_.narrow(0, 0, numel_));
}

int64_t Int8AllReduce::wireBytes() const { return 2 * (comm_.size() - 1) * (chunk_ + 4); }

int64_t Int8AllReduce::phases() const { return ringAllReducePhases(comm_.size()); }

int64_t Int8AllReduce::wireBytesOf(const std::vector<int64_t>& shape) const {
  // One byte per value in each phase: the ring's 2 (P-1)/P of a one-byte payload.
  return ringAllReduceWireBytes(numelOf(shape), comm_.size());
}

}  // namespace balancenet::comm
