// Tests of MnistDataset: loading small synthetic datasets, their errors, and the real Fashion-MNIST.
#include "balancenet/data/MnistDataset.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "balancenet/core/Error.h"
#include "balancenet/data/IdxFile.h"
#include "testing/TempDir.h"
#include "testing/UsageErrors.h"

namespace balancenet::data {
namespace {

using balancenet::testing::TempDir;

// Writes <prefix>-images-idx3-ubyte / <prefix>-labels-idx1-ubyte with n images of h x w pixels where
// pixel (i, y, x) = (i * 31 + y * w + x) mod 256 and label i = (labelBase + i) mod 10.
void writeSet(const TempDir& dir, const std::string& prefix, int64_t nImages, int64_t nLabels, int64_t h, int64_t w,
              bool gz, uint8_t labelBase = 0) {
  IdxArray images{{nImages, h, w}, {}};
  for (int64_t i = 0; i < nImages; ++i)
    for (int64_t p = 0; p < h * w; ++p) images.data.push_back(static_cast<uint8_t>((i * 31 + p) % 256));
  IdxArray labels{{nLabels}, {}};
  for (int64_t i = 0; i < nLabels; ++i) labels.data.push_back(static_cast<uint8_t>((labelBase + i) % 10));
  const std::string ext = gz ? ".gz" : "";
  writeIdx(dir.file(prefix + "-images-idx3-ubyte" + ext), images, gz);
  writeIdx(dir.file(prefix + "-labels-idx1-ubyte" + ext), labels, gz);
}

float normalised(int pixel) { return static_cast<float>((pixel / 255.0 - kPixelMean) / kPixelStd); }

using balancenet::testing::usageErrorOf;

TEST(MnistDataset, LoadsSyntheticTrainSet) {
  TempDir dir;
  writeSet(dir, "train", 12, 12, 4, 3, true);
  const MnistDataset ds = loadMnist(dir.path(), true);
  EXPECT_EQ(ds.size(), 12);
  EXPECT_EQ(ds.images.sizes(), (std::vector<int64_t>{12, 1, 4, 3}));
  EXPECT_EQ(ds.images.scalar_type(), at::kFloat);
  EXPECT_EQ(ds.labels.sizes(), (std::vector<int64_t>{12}));
  EXPECT_EQ(ds.labels.scalar_type(), at::kLong);
  // Sample 9: first pixel 9*31 % 256 = 23, last (279 + 11) % 256 = 34; label 9.
  EXPECT_NEAR(ds.images[9][0][0][0].item<float>(), normalised(23), 1e-6);
  EXPECT_NEAR(ds.images[9][0][3][2].item<float>(), normalised(34), 1e-6);
  EXPECT_EQ(ds.labels[9].item<int64_t>(), 9);
  EXPECT_EQ(ds.labels[11].item<int64_t>(), 1);
}

TEST(MnistDataset, NormalisationMapsBlackAndWhite) {
  TempDir dir;
  IdxArray images{{2, 1, 2}, {0, 255, 255, 0}};
  writeIdx(dir.file("t10k-images-idx3-ubyte"), images, false);
  writeIdx(dir.file("t10k-labels-idx1-ubyte"), IdxArray{{2}, {3, 7}}, false);
  const MnistDataset ds = loadMnist(dir.path(), false);
  EXPECT_NEAR(ds.images[0][0][0][0].item<float>(), -0.2860 / 0.3530, 1e-6);
  EXPECT_NEAR(ds.images[0][0][0][1].item<float>(), (1 - 0.2860) / 0.3530, 1e-6);
  EXPECT_EQ(ds.labels[1].item<int64_t>(), 7);
}

TEST(MnistDataset, TrainAndTestSetsAreDistinct) {
  TempDir dir;
  writeSet(dir, "train", 8, 8, 2, 2, true);
  writeSet(dir, "t10k", 3, 3, 2, 2, false, 5);
  EXPECT_EQ(loadMnist(dir.path(), true).size(), 8);
  const MnistDataset test = loadMnist(dir.path(), false);
  EXPECT_EQ(test.size(), 3);
  EXPECT_EQ(test.labels[0].item<int64_t>(), 5);
}

TEST(MnistDataset, IndexSelectKeepsOrder) {
  TempDir dir;
  writeSet(dir, "train", 10, 10, 2, 2, true);
  const MnistDataset ds = loadMnist(dir.path(), true);
  const std::vector<int64_t> idx{7, 2, 2, 9};
  const at::Tensor images = ds.imagesAt(idx);
  const at::Tensor labels = ds.labelsAt(idx);
  ASSERT_EQ(images.sizes(), (std::vector<int64_t>{4, 1, 2, 2}));
  ASSERT_EQ(labels.sizes(), (std::vector<int64_t>{4}));
  for (size_t k = 0; k < idx.size(); ++k) {
    EXPECT_TRUE(images[static_cast<int64_t>(k)].equal(ds.images[idx[k]])) << "position " << k;
    EXPECT_EQ(labels[static_cast<int64_t>(k)].item<int64_t>(), idx[k] % 10);
  }
}

TEST(MnistDataset, MissingDirectoryAndFiles) {
  TempDir dir;
  const std::string nowhere = dir.file("nowhere");
  EXPECT_EQ(usageErrorOf([&] { loadMnist(nowhere, true); }), "--data-dir " + nowhere + ": no such directory");
  EXPECT_EQ(usageErrorOf([&] { loadMnist(dir.path(), true); }),
            "--data-dir " + dir.path() + ": no train-images-idx3-ubyte(.gz) found");
  writeSet(dir, "train", 4, 4, 2, 2, true);
  std::filesystem::remove(dir.file("train-labels-idx1-ubyte.gz"));
  EXPECT_EQ(usageErrorOf([&] { loadMnist(dir.path(), true); }),
            "--data-dir " + dir.path() + ": no train-labels-idx1-ubyte(.gz) found");
  EXPECT_EQ(usageErrorOf([&] { loadMnist(dir.path(), false); }),
            "--data-dir " + dir.path() + ": no t10k-images-idx3-ubyte(.gz) found");
}

TEST(MnistDataset, ImageLabelCountMismatch) {
  TempDir dir;
  writeSet(dir, "train", 6, 5, 2, 2, false);
  EXPECT_EQ(
      usageErrorOf([&] { loadMnist(dir.path(), true); }),
      "--data-dir " + dir.path() + ": train-images-idx3-ubyte has 6 images but train-labels-idx1-ubyte has 5 labels");
}

TEST(MnistDataset, LabelOutOfRange) {
  TempDir dir;
  writeSet(dir, "train", 3, 3, 2, 2, true);
  writeIdx(dir.file("train-labels-idx1-ubyte.gz"), IdxArray{{3}, {1, 10, 2}}, true);
  EXPECT_EQ(usageErrorOf([&] { loadMnist(dir.path(), true); }),
            dir.file("train-labels-idx1-ubyte.gz") + ": label 10 of sample 1 is out of range 0..9");
}

TEST(MnistDataset, MalformedFileErrorNamesTheFile) {
  TempDir dir;
  writeSet(dir, "train", 3, 3, 2, 2, true);
  dir.writeRaw("train-images-idx3-ubyte.gz", {0, 0, 8, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0}, true);
  EXPECT_EQ(usageErrorOf([&] { loadMnist(dir.path(), true); }),
            dir.file("train-images-idx3-ubyte.gz") +
                ": bad magic 0x00000802, expected 0x00000803 (an MNIST image file): it has 2 dims, not 3");
}

// The real dataset the trainer uses by default; the system image must provide it.
TEST(MnistDataset, RealFashionMnist) {
  if (!std::filesystem::is_directory(kDefaultDataDir))
    FAIL() << kDefaultDataDir << " is missing: install the Debian package dataset-fashion-mnist";
  for (bool train : {true, false}) {
    const MnistDataset ds = loadMnist(kDefaultDataDir, train);
    const int64_t n = train ? 60000 : 10000;
    EXPECT_EQ(ds.size(), n);
    EXPECT_EQ(ds.images.sizes(), (std::vector<int64_t>{n, 1, 28, 28}));
    EXPECT_EQ(ds.labels.min().item<int64_t>(), 0);
    EXPECT_EQ(ds.labels.max().item<int64_t>(), 9);
    // Fashion-MNIST is balanced: each class has exactly a tenth of the samples.
    const at::Tensor counts = at::bincount(ds.labels);
    EXPECT_TRUE(counts.eq(n / 10).all().item<bool>()) << counts;
    // The constants are the training set's statistics, so it normalises to ~zero mean and unit std.
    EXPECT_NEAR(ds.images.mean().item<double>(), 0.0, 0.02);
    EXPECT_NEAR(ds.images.std().item<double>(), 1.0, 0.02);
  }
}

}  // namespace
}  // namespace balancenet::data
