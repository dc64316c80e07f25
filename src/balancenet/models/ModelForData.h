// ModelForData: a model's input and output sizes taken from the data it will train on.
#pragma once
#include "balancenet/data/Dataset.h"
#include "balancenet/models/ModelZoo.h"

namespace balancenet::models {

// inputShape, tokenInput and outputs from the dataset: its sample shape, the class count or vocabulary,
// or the elements of one regression target. buildModel() then checks the model takes such samples.
void fitModelToData(ModelOptions& options, const data::DatasetSpec& spec);

}  // namespace balancenet::models
