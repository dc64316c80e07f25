// ResNet: CIFAR-style ResNet-18 and ResNet-50 for 28x28 inputs.
#pragma once
#include <cstdint>
#include <vector>

#include "balancenet/models/ModelZoo.h"
#include "balancenet/models/SequentialNetwork.h"
#include "balancenet/models/ShapeTracker.h"

namespace balancenet::models {

enum class ResNetBlock { Basic, Bottleneck };

struct ResNetLayout {
  ResNetBlock block;
  std::vector<int64_t> blocksPerStage;  // stage i has 64 * 2^i * width planes

  static ResNetLayout resnet18() { return {ResNetBlock::Basic, {2, 2, 2, 2}}; }
  static ResNetLayout resnet50() { return {ResNetBlock::Bottleneck, {3, 4, 6, 3}}; }
};

class ResNet : public SequentialNetwork {
 public:
  ResNet(const ModelOptions& options, ShapeTracker& tracker, const ResNetLayout& layout);
};

}  // namespace balancenet::models
