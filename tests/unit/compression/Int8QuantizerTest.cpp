// The int8 codes: within half a step of the chunk's scale, zeros as zeros, an overflow that announces itself, and
// error feedback that keeps the residual below half a step over a hundred steps while nothing is lost.
#include "balancenet/compression/Int8Quantizer.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

namespace balancenet::compression {
namespace {

TEST(Int8Quantizer, EveryValueIsWithinHalfAStepOfItsCode) {
  at::manual_seed(1);
  const auto values = at::randn({1000}) * 0.05;
  auto codes = at::empty({1000}, at::kChar);
  const float scale = quantizeInt8(values, codes);
  EXPECT_FLOAT_EQ(scale, values.abs().max().item<float>() / 127);
  EXPECT_LE(codes.abs().max().item<int>(), 127);
  auto decoded = at::empty({1000});
  dequantizeInt8(codes, scale, decoded);
  // Half a step, plus float32's rounding of v / scale and of code * scale.
  EXPECT_LE((decoded - values).abs().max().item<double>(), scale * (0.5 + 1e-5));
  EXPECT_EQ(codes.abs().max().item<int>(), 127);  // the largest value takes the largest code
}

TEST(Int8Quantizer, ZerosAreSentAsZerosAndAnOverflowArrivesAsNaN) {
  auto codes = at::empty({8}, at::kChar), decoded = at::empty({8});
  EXPECT_EQ(quantizeInt8(at::zeros({8}), codes), 0.0f);
  dequantizeInt8(codes, 0.0f, decoded);
  EXPECT_TRUE(at::equal(decoded, at::zeros({8})));
  // fp16's overflow: the loss scaler must see it in the sum, and the feedback must not keep it.
  auto values = at::ones({8});
  values[3] = std::numeric_limits<float>::infinity();
  auto residual = at::full({8}, 0.25f);
  const float scale = quantizeInt8WithFeedback(values, residual, codes);
  EXPECT_FALSE(std::isfinite(scale));
  dequantizeInt8(codes, scale, decoded);
  EXPECT_TRUE(decoded.isnan().all().item<bool>());
  EXPECT_TRUE(at::equal(residual, at::zeros({8})));
}

TEST(Int8Quantizer, OverAHundredStepsTheResidualStaysBelowHalfAStepAndNothingIsLost) {
  at::manual_seed(4);
  auto residual = at::zeros({500}), codes = at::empty({500}, at::kChar), decoded = at::empty({500});
  auto given = at::zeros({500}, at::kDouble), sent = at::zeros({500}, at::kDouble);
  double largest = 0;
  for (int step = 0; step < 100; ++step) {
    const auto g = at::randn({500}) * 1e-3 + 1e-5;  // a bias far below one step: plain codes would round it away
    largest = std::max(largest, g.abs().max().item<double>());
    given += g.to(at::kDouble);
    const float scale = quantizeInt8WithFeedback(g, residual, codes);
    dequantizeInt8(codes, scale, decoded);
    sent += decoded.to(at::kDouble);
    // |e| <= scale / 2 = max|g + e| / 254 <= (max|g| + max|e|) / 254: max|e| <= max|g| / 253, whatever the step.
    EXPECT_LE(residual.abs().max().item<double>(), largest / 253 * 1.001) << step;
  }
  // Telescoping: the sum sent is the sum given less the last residual, up to float32's rounding each step.
  const auto lost = (given - sent - residual.to(at::kDouble)).abs().max().item<double>();
  EXPECT_LT(lost, 100 * 0x1p-24 * 4 * largest);
  // Without the feedback the bias of 1e-5 a step would be rounded away in most steps: far more lost.
  auto plainSent = at::zeros({500}, at::kDouble);
  at::manual_seed(4);
  auto plainGiven = at::zeros({500}, at::kDouble);
  for (int step = 0; step < 100; ++step) {
    const auto g = at::randn({500}) * 1e-3 + 1e-5;
    plainGiven += g.to(at::kDouble);
    dequantizeInt8(codes, quantizeInt8(g, codes), decoded);
    plainSent += decoded.to(at::kDouble);
  }
  EXPECT_GT((plainGiven - plainSent).abs().max().item<double>(), 10 * lost);
}

}  // namespace
}  // namespace balancenet::compression
