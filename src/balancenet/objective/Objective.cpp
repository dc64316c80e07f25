// Objective: cross-entropy over classes or tokens and mean squared error, as per-sample sums.
#include "balancenet/objective/Objective.h"

#include <ATen/ATen.h>

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::objective {

LossKind parseLossKind(const std::string& name) {
  if (name == "auto") return LossKind::Auto;
  if (name == "cross-entropy") return LossKind::CrossEntropy;
  if (name == "mse") return LossKind::Mse;
  throw UsageError(fmt::format("--loss '{}': choose auto, cross-entropy or mse", name));
}

Objective::Objective(const data::DatasetSpec& spec, ObjectiveOptions options)
    : spec_(spec), labelSmoothing_(options.labelSmoothing) {
  const bool regression = spec.target == data::TargetKind::Regression;
  kind_ = options.loss == LossKind::Auto ? (regression ? LossKind::Mse : LossKind::CrossEntropy) : options.loss;
  if (kind_ == LossKind::Mse && !regression)
    throw UsageError(fmt::format(
        "--loss mse: {} has class targets; mse needs float targets (an npy Y saved as float32)", spec.source));
  if (kind_ == LossKind::CrossEntropy && regression)
    throw UsageError(fmt::format("--loss cross-entropy: {} has float targets; use --loss mse", spec.source));
  if (!(labelSmoothing_ >= 0 && labelSmoothing_ < 1))
    throw UsageError(fmt::format("--label-smoothing must be in [0, 1), got {}", labelSmoothing_));
  if (labelSmoothing_ > 0 && kind_ == LossKind::Mse)
    throw UsageError("--label-smoothing applies to cross-entropy, not to --loss mse");
}

at::Tensor Objective::sum(const at::Tensor& outputs, const at::Tensor& targets, double smoothing) const {
  const int64_t n = outputs.size(0);
  if (kind_ == LossKind::Mse) {
    // Per sample: the mean over its outputs; so divide the summed squares by the elements of one sample.
    const at::Tensor diff = outputs.reshape({n, -1}) - targets.reshape({n, -1}).to(outputs.scalar_type());
    const int64_t perSample = n == 0 ? 1 : diff.size(1);
    return diff.pow(2).sum() / static_cast<double>(perSample);
  }
  const int64_t classes = outputs.size(-1);
  const at::Tensor flat = at::cross_entropy_loss(outputs.reshape({-1, classes}), targets.reshape({-1}), {},
                                                 at::Reduction::Sum, -100, smoothing);
  // A token sample's loss is the mean over its T tokens.
  return perToken() ? flat / static_cast<double>(targets.size(-1)) : flat;
}

at::Tensor Objective::trainingLossSum(const at::Tensor& outputs, const at::Tensor& targets) const {
  return sum(outputs, targets, labelSmoothing_);
}

at::Tensor Objective::lossSum(const at::Tensor& outputs, const at::Tensor& targets) const {
  return sum(outputs, targets, 0.0);
}

double Objective::correctSum(const at::Tensor& outputs, const at::Tensor& targets) const {
  if (!hasAccuracy() || outputs.size(0) == 0) return 0;
  const at::Tensor hits = outputs.argmax(-1).eq(targets).to(at::kDouble);
  return perToken() ? hits.mean(-1).sum().item<double>() : hits.sum().item<double>();
}

metrics::MetricStyle Objective::metricStyle() const {
  metrics::MetricStyle style;
  style.accuracy = hasAccuracy();
  if (perToken()) {
    style.rateUnit = "tokens";
    style.unitsPerSample = spec_.inputShape.at(0);
    style.perplexity = true;
    style.bitsPerByte = spec_.bytesAsTokens;
  }
  return style;
}

std::string Objective::describe() const {
  if (kind_ == LossKind::Mse) return "mean squared error";
  if (perToken()) return fmt::format("cross-entropy per token (vocabulary {})", spec_.classes);
  return fmt::format("cross-entropy over {} classes", spec_.classes);
}

}  // namespace balancenet::objective
