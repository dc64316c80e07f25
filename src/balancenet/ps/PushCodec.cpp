// The push payload per wire type: float32 as is; bf16/fp16 two to a float; int8 a float scale, then four to a float.
#include "balancenet/ps/PushCodec.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "balancenet/compression/Int8Quantizer.h"
#include "balancenet/core/Error.h"

namespace balancenet::ps {

using compression::GradCompression;

void checkPushCompression(const compression::CompressionOptions& options) {
  require(options.kind != GradCompression::PowerSgd,
          "--grad-compress powersgd is not for --comm ps: its factors need one Q agreed by every worker, and a server "
          "sees one worker's slice of a shard at a time (bf16, fp16 and int8 are)");
  require(!compression::compresses(options) || options.warmupSteps == 0,
          "--compress-warmup is not for --comm ps: a push's size is fixed for the whole run");
}

PushCodec::PushCodec(compression::CompressionOptions options, int64_t elements)
    : options_(options), elements_(elements), feedback_(options.kind, options.errorFeedback) {
  checkPushCompression(options_);
  if (options_.kind == GradCompression::Int8) residual_ = at::zeros({elements_}, at::kFloat);
}

int64_t PushCodec::payloadFloats() const {
  switch (options_.kind) {
    case GradCompression::None:
      return elements_;
    case GradCompression::Int8:
      return 1 + (elements_ + 3) / 4;
    default:
      return (elements_ + 1) / 2;
  }
}

void PushCodec::encode(const at::Tensor& values, const at::Tensor& payload) {
  switch (options_.kind) {
    case GradCompression::None:
      payload.narrow(0, 0, elements_).copy_(values);
      return;
    case GradCompression::Int8: {
      auto codes = payload.narrow(0, 1, payloadFloats() - 1).view(at::kChar).narrow(0, 0, elements_);
      payload[0].fill_(compression::quantizeInt8WithFeedback(values, residual_, codes));
      if (!options_.errorFeedback) residual_.zero_();
      return;
    }
    default:
      payload.view(wireType(options_.kind)).narrow(0, 0, elements_).copy_(feedback_.encode(values));
  }
}

at::Tensor PushCodec::decode(const at::Tensor& payload, const at::Tensor& scratch) const {
  switch (options_.kind) {
    case GradCompression::None:
      return payload.narrow(0, 0, elements_);
    case GradCompression::Int8:
      compression::dequantizeInt8(payload.narrow(0, 1, payloadFloats() - 1).view(at::kChar).narrow(0, 0, elements_),
                                  payload[0].item<float>(), scratch);
      return scratch;
    default:
      scratch.copy_(payload.view(wireType(options_.kind)).narrow(0, 0, elements_));
      return scratch;
  }
}

at::Tensor PushCodec::residual() const {
  if (options_.kind == GradCompression::Int8) return residual_;
  const auto& cast = feedback_.residual();
  return cast.defined() ? cast : at::zeros({elements_}, at::kFloat);
}

void PushCodec::restore(const at::Tensor& residual) {
  if (options_.kind == GradCompression::Int8)
    residual_.copy_(residual);
  else if (compression::compresses(options_.kind))
    feedback_.restore(residual);
}

}  // namespace balancenet::ps
