// Objective: the loss and the metrics of a run, chosen from what the dataset's targets are.
#pragma once
#include <string>

#include <ATen/core/Tensor.h>

#include "balancenet/data/Dataset.h"
#include "balancenet/metrics/MetricStyle.h"
#include "balancenet/objective/ObjectiveOptions.h"

namespace balancenet::objective {

// Exactness rests on one convention: a sample's loss is a mean over its own elements (its tokens, its
// regression outputs) and a batch's loss is the SUM over its samples, so (sum over every rank's share) /
// global batch is the whole batch's mean loss, whatever the split.
class Objective {
 public:
  // Throws UsageError where the loss does not fit the targets (mse on classes, cross-entropy on
  // regression targets, label smoothing with mse or outside [0, 1)).
  Objective(const data::DatasetSpec& spec, ObjectiveOptions options);

  // Sum over the batch of each sample's training loss (with label smoothing).
  at::Tensor trainingLossSum(const at::Tensor& outputs, const at::Tensor& targets) const;
  // The same without label smoothing: what evaluation reports.
  at::Tensor lossSum(const at::Tensor& outputs, const at::Tensor& targets) const;
  // Sum over the batch of each sample's accuracy (a token sample's: the share of its tokens predicted);
  // 0 without accuracy (regression).
  double correctSum(const at::Tensor& outputs, const at::Tensor& targets) const;

  bool hasAccuracy() const { return kind_ != LossKind::Mse; }
  bool perToken() const { return spec_.target == data::TargetKind::Tokens; }
  bool bitsPerByte() const { return spec_.bytesAsTokens; }
  LossKind kind() const { return kind_; }
  const data::DatasetSpec& spec() const { return spec_; }
  // e.g. "cross-entropy over 10 classes", "cross-entropy per token (vocabulary 256)", "mse over 3 outputs".
  std::string describe() const;
  // How the run reports: tokens/s and perplexity (bits per byte for text) for token targets, mse for
  // regression, accuracy for classes.
  metrics::MetricStyle metricStyle() const;

 private:
  at::Tensor sum(const at::Tensor& outputs, const at::Tensor& targets, double smoothing) const;

  data::DatasetSpec spec_;
  LossKind kind_;
  double labelSmoothing_;
};

}  // namespace balancenet::objective
