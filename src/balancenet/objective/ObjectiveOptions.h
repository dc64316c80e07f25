// ObjectiveOptions: the --loss and --label-smoothing choices (no torch: the job's configuration holds them).
#pragma once
#include <string>
#include "balancenet/core/FieldList.h"

namespace balancenet::objective {

enum class LossKind { Auto, CrossEntropy, Mse };

struct ObjectiveOptions {
  LossKind loss = LossKind::Auto;  // Auto: cross-entropy for class and token targets, mse for regression
  double labelSmoothing = 0;       // cross-entropy only, training only; in [0, 1)

  // The fields a launcher sends its workers (core/FieldList.h): every one.
  BALANCENET_FIELDS(loss, labelSmoothing);
};
BALANCENET_CHECK_FIELDS(ObjectiveOptions);

// LossKind from --loss's spelling (auto, cross-entropy, mse); UsageError otherwise.
LossKind parseLossKind(const std::string& name);

}  // namespace balancenet::objective
