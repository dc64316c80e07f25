// Synthetic MNIST-format data: class-dependent blobs so a model can learn something in a few steps.
#include "testing/SyntheticData.h"

#include <random>

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

data::MnistDataset syntheticDataset(int64_t n, uint64_t seed) {
  std::vector<uint8_t> pixels, labels;
  fill(n, seed, pixels, labels);
  data::MnistDataset d;
  d.images =
      (at::tensor(std::vector<int64_t>(pixels.begin(), pixels.end())).to(at::kFloat).view({n, 1, 28, 28}) / 255.0 -
       data::kPixelMean) /
      data::kPixelStd;
  d.labels = at::tensor(std::vector<int64_t>(labels.begin(), labels.end()));
  return d;
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
