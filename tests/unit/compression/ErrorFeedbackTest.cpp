// Error feedback: each cast within one rounding of the wire type, the residual bounded however long the run, and
// what was sent over a run is what was given less the last residual.
#include "balancenet/compression/ErrorFeedback.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

namespace balancenet::compression {
namespace {

// The wire type's unit roundoff, half its eps (bf16 2^-7, fp16 2^-10), and the absolute error of its smallest
// numbers (fp16's subnormals are 2^-24 apart; bf16's reach as low as float32's).
double roundoff(GradCompression c) { return c == GradCompression::Bf16 ? 0x1p-8 : 0x1p-11; }
double absoluteRoundoff(GradCompression c) { return c == GradCompression::Bf16 ? 0x1p-134 : 0x1p-25; }

class ErrorFeedbackTest : public ::testing::TestWithParam<GradCompression> {};

TEST_P(ErrorFeedbackTest, ACastIsWithinOneRoundingOfWhatItCarries) {
  at::manual_seed(3);
  const auto values = at::randn({1000}) * 0.01;
  ErrorFeedback feedback(GetParam());
  const auto sent = feedback.encode(values);
  EXPECT_EQ(sent.scalar_type(), wireType(GetParam()));
  const auto error = (sent.to(at::kFloat) - values).abs();
  EXPECT_TRUE((error <= values.abs() * roundoff(GetParam()) + absoluteRoundoff(GetParam())).all().item<bool>());
  EXPECT_TRUE(at::equal(feedback.residual(), values - sent.to(at::kFloat)));  // what was lost is kept
}

TEST_P(ErrorFeedbackTest, OverAHundredStepsTheResidualStaysBelowOneRoundingAndNothingIsLost) {
  at::manual_seed(4);
  ErrorFeedback feedback(GetParam());
  auto given = at::zeros({500}, at::kDouble), sent = at::zeros({500}, at::kDouble);
  double largest = 0;
  for (int step = 0; step < 100; ++step) {
    const auto g = at::randn({500}) * 1e-3 + 1e-4;  // small gradients, a bias that plain casts would lose
    largest = std::max(largest, g.abs().max().item<double>());
    given += g.to(at::kDouble);
    sent += feedback.encode(g).to(at::kDouble);
    // |e| <= u |g + e| (+ the subnormals' absolute error), so |e| <= u max|g| / (1 - u): it never grows.
    EXPECT_LE(feedback.residual().abs().max().item<double>(),
              roundoff(GetParam()) * largest * 1.01 + absoluteRoundoff(GetParam()))
        << step;
  }
  // Telescoping: sum(sent) = sum(given) - e_100, up to float32's rounding of each step's g + e.
  const auto lost = (given - sent - feedback.residual().to(at::kDouble)).abs().max().item<double>();
  EXPECT_LT(lost, 100 * 0x1p-24 * 2 * largest);
}

// A gradient the wire type cannot hold, the same every step: a plain cast loses the same bit each time, so the
// loss grows with the steps; with the feedback it stays below one rounding of the gradient.
TEST_P(ErrorFeedbackTest, ABiasAPlainCastWouldLoseEveryStepIsKept) {
  const auto g = at::full({8}, 0.1f);
  const double cast = g.to(wireType(GetParam())).to(at::kDouble)[0].item<double>();
  ErrorFeedback feedback(GetParam());
  double sent = 0;
  for (int step = 0; step < 100; ++step) sent += feedback.encode(g).to(at::kDouble)[0].item<double>();
  const double given = 100 * g[0].item<double>();
  const double plainLoss = std::abs(given - 100 * cast), feedbackLoss = std::abs(given - sent);
  EXPECT_LE(feedbackLoss, roundoff(GetParam()) * 0.1 * 1.01);
  EXPECT_GT(plainLoss, 10 * feedbackLoss);
}

// --no-error-feedback: every step is the plain cast, and the residual stays zero.
TEST_P(ErrorFeedbackTest, WithoutFeedbackEachStepIsThePlainCast) {
  const auto g = at::full({8}, 0.1f);
  ErrorFeedback dropped(GetParam(), /*keep=*/false);
  for (int step = 0; step < 3; ++step) {
    EXPECT_TRUE(at::equal(dropped.encode(g), g.to(wireType(GetParam())))) << step;
    EXPECT_EQ(dropped.residual().abs().max().item<float>(), 0.0f) << step;
  }
}

TEST_P(ErrorFeedbackTest, ABufferOfAnotherSizeStartsFromZero) {
  ErrorFeedback feedback(GetParam());
  feedback.encode(at::full({10}, 0.1f));
  EXPECT_GT(feedback.residual().abs().max().item<double>(), 0);
  const auto other = at::full({4}, 0.1f);
  const auto sent = feedback.encode(other);
  EXPECT_TRUE(at::equal(sent, other.to(wireType(GetParam()))));  // no old residual added
}

INSTANTIATE_TEST_SUITE_P(WireTypes, ErrorFeedbackTest, ::testing::Values(GradCompression::Bf16, GradCompression::Fp16),
                         [](const auto& info) { return std::string(gradCompressionName(info.param)); });

}  // namespace
}  // namespace balancenet::compression
