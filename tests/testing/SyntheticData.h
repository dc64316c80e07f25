// SyntheticData: small MNIST-shaped datasets for fast tests, in memory or as IDX files on disk.
#pragma once
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "balancenet/data/Dataset.h"
#include "balancenet/objective/Objective.h"

namespace balancenet::testing {

// Images [N,1,28,28] and class labels [N] in memory: a Dataset the engine trains on, with the tensors at
// hand for the reference computations tests make by hand.
class ImageSet final : public data::Dataset {
 public:
  ImageSet(at::Tensor images, at::Tensor labels);
  at::Tensor images, labels;

  const data::DatasetSpec& spec() const override { return spec_; }
  int64_t size() const override { return labels.size(0); }
  data::Batch batch(const std::vector<int64_t>& indices) const override;
  std::vector<int64_t> classLabels() const override;
  at::Tensor imagesAt(const std::vector<int64_t>& idx) const;
  at::Tensor labelsAt(const std::vector<int64_t>& idx) const;

 private:
  data::DatasetSpec spec_;
};

// n random 28x28 images with labels 0..9, deterministic for a seed, normalised like the real data.
ImageSet syntheticDataset(int64_t n, uint64_t seed);

// Cross-entropy over the 10 classes of syntheticDataset.
const objective::Objective& syntheticObjective();

// Writes train-* (nTrain samples) and t10k-* (nTest) IDX files, gzip or plain, into dir.
void writeSyntheticMnistDir(const std::string& dir, int64_t nTrain, int64_t nTest, bool gzip = true);

}  // namespace balancenet::testing
