// PushCodec: a push's payload in each wire type decodes to the shard within the type's rounding, an odd shard
// included; the error feedback carries what one push lost into the next; PowerSGD is refused.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "balancenet/core/Error.h"
#include "balancenet/ps/PushCodec.h"

namespace balancenet::ps {
namespace {

using compression::CompressionOptions;
using compression::GradCompression;

CompressionOptions wire(GradCompression kind) {
  CompressionOptions options;
  options.kind = kind;
  return options;
}

at::Tensor shard(int64_t n, uint64_t seed) {
  return at::randn({n}, at::make_generator<at::CPUGeneratorImpl>(seed), at::TensorOptions().dtype(at::kFloat));
}

TEST(PushCodec, EachWireTypeRoundTripsWithinItsRoundingInFewerFloats) {
  const int64_t n = 1001;  // odd: the last float of a bf16 payload is half used, an int8 one a quarter
  const auto values = shard(n, 3);
  const double largest = values.abs().max().item<double>();
  // float32 exact; bf16 within half its eps of each value; fp16 likewise; int8 within half a step of max/127.
  const std::vector<std::tuple<GradCompression, int64_t, double>> cases{
      {GradCompression::None, n, 0.0},
      {GradCompression::Bf16, (n + 1) / 2, 0x1p-8 * largest},
      {GradCompression::Fp16, (n + 1) / 2, 0x1p-11 * largest},
      {GradCompression::Int8, 1 + (n + 3) / 4, 0.5 * largest / 127 * 1.0001}};
  for (const auto& [kind, floats, bound] : cases) {
    PushCodec codec(wire(kind), n);
    EXPECT_EQ(codec.payloadFloats(), floats) << compression::gradCompressionName(kind);
    // The payload lies after a message's header, as PsMessage::payload() gives it.
    auto message = at::zeros({12 + floats}, at::kFloat);
    auto payload = message.narrow(0, 12, floats);
    codec.encode(values, payload);
    auto scratch = at::zeros({n}, at::kFloat);
    const auto decoded = codec.decode(payload, scratch);
    EXPECT_LE((decoded - values).abs().max().item<double>(), bound) << compression::gradCompressionName(kind);
  }
}

TEST(PushCodec, WhatOnePushLostTheNextCarries) {
  const int64_t n = 64;
  for (const auto kind : {GradCompression::Bf16, GradCompression::Int8}) {
    PushCodec codec(wire(kind), n);
    auto payload = at::zeros({codec.payloadFloats()}, at::kFloat);
    auto scratch = at::zeros({n}, at::kFloat), sent = at::zeros({n}, at::kDouble), given = at::zeros({n}, at::kDouble);
    for (int step = 0; step < 100; ++step) {
      const auto g = shard(n, 10 + step);
      codec.encode(g, payload);
      sent += codec.decode(payload, scratch).to(at::kDouble);
      given += g.to(at::kDouble);
    }
    // Over the run, what was sent is what was given less the last residual.
    EXPECT_LE((given - sent - codec.residual().to(at::kDouble)).abs().max().item<double>(), 1e-4)
        << compression::gradCompressionName(kind);
    EXPECT_GT(codec.residual().abs().max().item<float>(), 0.0f) << compression::gradCompressionName(kind);
  }
}

TEST(PushCodec, PowerSgdIsRefusedNamingWhatWorks) {
  try {
    PushCodec codec(wire(GradCompression::PowerSgd), 10);
    FAIL() << "powersgd accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("bf16, fp16 and int8 are"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace balancenet::ps
