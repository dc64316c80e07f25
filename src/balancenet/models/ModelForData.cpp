// ModelForData: the dataset's spec into the model's options.
#include "balancenet/models/ModelForData.h"

namespace balancenet::models {

void fitModelToData(ModelOptions& options, const data::DatasetSpec& spec) {
  options.inputShape = spec.inputShape;
  options.tokenInput = spec.tokenInput;
  if (spec.target == data::TargetKind::Regression) {
    options.outputs = 1;
    for (int64_t d : spec.targetShape) options.outputs *= d;
  } else {
    options.outputs = spec.classes;
  }
}

}  // namespace balancenet::models
