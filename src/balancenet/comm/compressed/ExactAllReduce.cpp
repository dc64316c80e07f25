#include "balancenet/comm/compressed/ExactAllReduce.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "balancenet/comm/GradientSync.h"

namespace balancenet::comm {

void ExactAllReduce::start(const at::Tensor& buffer) { work_ = comm_.allreduceSumAsync(buffer); }

void ExactAllReduce::finish(const at::Tensor& buffer, Timeline* timeline, const std::string& label) {
  work_.wait(timeline, "wait " + label, fmt::format("all-reduce {} ({:.2f} MB)", label, megabytes(buffer.nbytes())));
}

int64_t ExactAllReduce::wireBytes() const {
  return ringAllReduceWireBytes(numel_ * static_cast<int64_t>(sizeof(float)), comm_.size());
}

int64_t ExactAllReduce::phases() const { return ringAllReducePhases(comm_.size()); }

int64_t ExactAllReduce::wireBytesOf(const std::vector<int64_t>& shape) const {
  return ringAllReduceWireBytes(numelOf(shape) * static_cast<int64_t>(sizeof(float)), comm_.size());
}

CastAllReduce::CastAllReduce(Collectives& comm, compression::GradCompression cast, int64_t numel, bool errorFeedback)
    : comm_(comm), cast_(cast), numel_(numel), feedback_(cast, errorFeedback), errorFeedback_(errorFeedback) {}

void CastAllReduce::start(const at::Tensor& buffer) {
  wire_ = feedback_.encode(buffer);
  work_ = comm_.allreduceSumAsync(wire_);
}

void CastAllReduce::finish(const at::Tensor& buffer, Timeline* timeline, const std::string& label) {
  work_.wait(timeline, "wait " + label,
             fmt::format("all-reduce {} ({:.2f} MB as {})", label, megabytes(wire_.nbytes()),
                         compression::gradCompressionName(cast_)));
  buffer.copy_(wire_);  // back to float32
}

int64_t CastAllReduce::wireBytes() const {
  return ringAllReduceWireBytes(compression::wireBytes(numel_ * static_cast<int64_t>(sizeof(float)), cast_),
                                comm_.size());
}

int64_t CastAllReduce::phases() const { return ringAllReducePhases(comm_.size()); }

int64_t CastAllReduce::wireBytesOf(const std::vector<int64_t>& shape) const {
  return ringAllReduceWireBytes(compression::wireBytes(numelOf(shape) * static_cast<int64_t>(sizeof(float)), cast_),
                                comm_.size());
}

std::vector<at::Tensor> CastAllReduce::saveState() const {
  // Before the first step the feedback has no residual yet: zeros, so the layout is the same from the start.
  const auto& residual = feedback_.residual();
  return {residual.defined() ? residual : at::zeros({numel_}, at::kFloat)};
}

void CastAllReduce::loadState(const std::vector<at::Tensor>& state) { feedback_.restore(state.at(0)); }

std::string CastAllReduce::describe() const {
  return fmt::format("{} {}", compression::gradCompressionName(cast_), compression::feedbackName(errorFeedback_));
}

}  // namespace balancenet::comm
