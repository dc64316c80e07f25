// Header packing: raw bytes in the first floats of the buffer (Gloo moves bytes, never converts them).
#include "balancenet/ps/PsMessage.h"

#include <cstring>

#include <ATen/ATen.h>

namespace balancenet::ps {
namespace {

static_assert(sizeof(PsHeader) % sizeof(float) == 0, "the header must fill whole floats");
constexpr int64_t kHeaderFloats = sizeof(PsHeader) / sizeof(float);

}  // namespace

PsMessage::PsMessage(int64_t payloadElements) : buffer_(at::zeros({kHeaderFloats + payloadElements}, at::kFloat)) {}

at::Tensor PsMessage::payload() const { return buffer_.narrow(0, kHeaderFloats, buffer_.numel() - kHeaderFloats); }

PsHeader PsMessage::header() const {
  PsHeader h;
  std::memcpy(static_cast<void*>(&h), buffer_.data_ptr<float>(), sizeof h);
  return h;
}

void PsMessage::setHeader(const PsHeader& header) { std::memcpy(buffer_.data_ptr<float>(), &header, sizeof header); }

int64_t PsMessage::bytes() const { return buffer_.numel() * static_cast<int64_t>(sizeof(float)); }

}  // namespace balancenet::ps
