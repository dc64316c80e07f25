// ResNet: ResNet-18 and ResNet-50 with the CIFAR stem for small images and the ImageNet stem for large ones.
#pragma once
#include <cstdint>
#include <vector>

#include "balancenet/models/ModelZoo.h"
#include "balancenet/models/SequentialNetwork.h"
#include "balancenet/models/ShapeTracker.h"

namespace balancenet::models {

// Inputs at least this many pixels on their shorter side get the ImageNet stem, smaller ones the CIFAR stem.
inline constexpr int64_t kImageNetStemFrom = 64;

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
