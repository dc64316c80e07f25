// Synthetic MNIST-format data: class-dependent blobs so a model can learn something in a few steps.
#include "testing/SyntheticData.h"

#include <ATen/ATen.h>

#include <random>
#include <utility>

#include "balancenet/data/IdxFile.h"

namespace balancenet::testing {
namespace {

void fill(int64_t n, uint64_t seed, std::vector<uint8_t>& pixels, std::vector<uint8_t>& labels) {
  std::mt19937_64 rng(seed);
  pixels.resize(n * 28 * 28);
  labels.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    const int label = static_cast<int>(rng() % 10);
    labels[i] = static_cast<uint8_t>(label);
    for (int p = 0; p < 28 * 28; ++p) {
      const bool lit = (p / 28) / 3 == label || (p % 28) / 3 == label;  // a class-specific cross
      pixels[i * 784 + p] = static_cast<uint8_t>((lit ? 160 : 0) + rng() % 90);
    }
  }
}

}  // namespace

ImageSet::ImageSet(at::Tensor images_, at::Tensor labels_) : images(std::move(images_)), labels(std::move(labels_)) {
  spec_.inputShape = {1, 28, 28};
  spec_.target = data::TargetKind::Class;
  spec_.classes = 10;
  spec_.targetShape = {};
  spec_.source = "synthetic";
}

at::Tensor ImageSet::imagesAt(const std::vector<int64_t>& idx) const {
  return images.index_select(0, at::tensor(idx, at::kLong));
}

at::Tensor ImageSet::labelsAt(const std::vector<int64_t>& idx) const {
  return labels.index_select(0, at::tensor(idx, at::kLong));
}

data::Batch ImageSet::batch(const std::vector<int64_t>& indices) const {
  return {imagesAt(indices), labelsAt(indices)};
}

std::vector<int64_t> ImageSet::classLabels() const {
  return std::vector<int64_t>(labels.data_ptr<int64_t>(), labels.data_ptr<int64_t>() + labels.numel());
}

const objective::Objective& syntheticObjective() {
  static const objective::Objective objective(syntheticDataset(1, 0).spec(), {});
  return objective;
}

ImageSet syntheticDataset(int64_t n, uint64_t seed) {
  std::vector<uint8_t> pixels, labels;
  fill(n, seed, pixels, labels);
  // Fashion-MNIST's statistics, as the real data is normalised.
  constexpr double kPixelMean = 0.2860, kPixelStd = 0.3530;
  return ImageSet(
      (at::tensor(std::vector<int64_t>(pixels.begin(), pixels.end())).to(at::kFloat).view({n, 1, 28, 28}) / 255.0 -
       kPixelMean) /
          kPixelStd,
      at::tensor(std::vector<int64_t>(labels.begin(), labels.end())));
}

void writeSyntheticMnistDir(const std::string& dir, int64_t nTrain, int64_t nTest, bool gzip) {
  const std::string ext = gzip ? ".gz" : "";
  for (auto [prefix, n] : {std::pair<std::string, int64_t>{"train", nTrain}, {"t10k", nTest}}) {
    std::vector<uint8_t> pixels, labels;
    fill(n, prefix == "train" ? 1 : 2, pixels, labels);
    data::writeIdx(dir + "/" + prefix + "-images-idx3-ubyte" + ext, {{n, 28, 28}, pixels}, gzip);
    data::writeIdx(dir + "/" + prefix + "-labels-idx1-ubyte" + ext, {{n}, labels}, gzip);
  }
}

}  // namespace balancenet::testing
