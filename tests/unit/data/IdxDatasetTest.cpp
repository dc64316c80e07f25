// Tests of the idx: format: any image size and class count, normalisation, the checks across splits.
#include "balancenet/data/IdxDataset.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "balancenet/data/IdxFile.h"
#include "testing/TempDir.h"
#include "testing/UsageErrors.h"

namespace balancenet::data {
namespace {

using balancenet::testing::TempDir;
using balancenet::testing::usageErrorOf;

// pixel (i, p) = (i * 31 + p) mod 256; labels as given.
void writeSplit(const TempDir& dir, const std::string& prefix, int64_t h, int64_t w,
                const std::vector<uint8_t>& labels) {
  const auto n = static_cast<int64_t>(labels.size());
  IdxArray images{{n, h, w}, {}};
  for (int64_t i = 0; i < n; ++i)
    for (int64_t p = 0; p < h * w; ++p) images.data.push_back(static_cast<uint8_t>((i * 31 + p) % 256));
  writeIdx(dir.file(prefix + "-images-idx3-ubyte.gz"), images, true);
  writeIdx(dir.file(prefix + "-labels-idx1-ubyte"), IdxArray{{n}, labels}, false);
}

DataOptions unitNormalization(const std::string& dir) {
  DataOptions o;
  o.source = "idx:" + dir;
  o.normalizeMean = {0.0};
  o.normalizeStd = {1.0};
  return o;
}

TEST(IdxDataset, AnyImageSizeAndClassCountFromTheTrainingLabels) {
  TempDir dir;
  writeSplit(dir, "train", 3, 5, {0, 1, 6, 4, 1, 0});
  writeSplit(dir, "t10k", 3, 5, {6, 2});
  const DatasetPair pair = openIdx(dir.path(), unitNormalization(dir.path()));
  const DatasetSpec& spec = pair.train->spec();
  EXPECT_EQ(spec.inputShape, (std::vector<int64_t>{1, 3, 5}));
  EXPECT_EQ(spec.target, TargetKind::Class);
  EXPECT_EQ(spec.classes, 7);
  EXPECT_FALSE(spec.tokenInput);
  EXPECT_TRUE(spec.targetShape.empty());
  EXPECT_EQ(spec.source, "idx:" + dir.path());
  EXPECT_EQ(pair.train->size(), 6);
  EXPECT_EQ(pair.test->size(), 2);
  EXPECT_EQ(pair.train->classLabels(), (std::vector<int64_t>{0, 1, 6, 4, 1, 0}));

  const Batch b = pair.train->batch({2, 5});
  ASSERT_EQ(b.inputs.sizes(), (std::vector<int64_t>{2, 1, 3, 5}));
  EXPECT_EQ(b.inputs.scalar_type(), at::kFloat);
  EXPECT_EQ(b.targets.scalar_type(), at::kLong);
  EXPECT_EQ(b.targets[0].item<int64_t>(), 6);
  // Sample 2, pixel (2, 4) = 2 * 31 + 14 = 76; sample 5, pixel (0, 0) = 155.
  EXPECT_FLOAT_EQ(b.inputs[0][0][2][4].item<float>(), 76 / 255.0f);
  EXPECT_FLOAT_EQ(b.inputs[1][0][0][0].item<float>(), 155 / 255.0f);
  EXPECT_EQ(pair.test->batch({0}).targets[0].item<int64_t>(), 6);
}

TEST(IdxDataset, ComputedStatisticsNormaliseTheTrainingSetAndAreCached) {
  TempDir dir;
  writeSplit(dir, "train", 4, 4, {0, 1, 1, 0, 1});
  writeSplit(dir, "t10k", 4, 4, {1});
  DataOptions o;
  o.source = "idx:" + dir.path();
  o.cacheDir = dir.file("cache");
  const DatasetPair pair = openIdx(dir.path(), o);
  const at::Tensor x = pair.train->batch({0, 1, 2, 3, 4}).inputs.to(at::kDouble);
  EXPECT_NEAR(x.mean().item<double>(), 0.0, 1e-6);
  EXPECT_NEAR(x.var(/*unbiased=*/false).item<double>(), 1.0, 1e-5);
  // One cache file, keyed by the training images' path.
  std::vector<std::filesystem::path> cached;
  for (const auto& e : std::filesystem::directory_iterator(o.cacheDir)) cached.push_back(e.path());
  ASSERT_EQ(cached.size(), 1u);
  const auto j = nlohmann::json::parse(std::ifstream(cached[0]));
  EXPECT_NE(j.at("key").get<std::string>().find(dir.file("train-images-idx3-ubyte.gz")), std::string::npos);
}

TEST(IdxDataset, DefectsNameTheFile) {
  TempDir dir;
  const std::string d = dir.path();
  const DataOptions o = unitNormalization(d);
  EXPECT_EQ(usageErrorOf([&] { openIdx(dir.file("none"), o); }), "idx:" + dir.file("none") + ": no such directory");
  writeSplit(dir, "train", 2, 2, {0, 1, 2});
  EXPECT_EQ(usageErrorOf([&] { openIdx(d, o); }), "idx:" + d + ": no t10k-images-idx3-ubyte(.gz) found");
  writeSplit(dir, "t10k", 2, 2, {1, 3});
  EXPECT_EQ(usageErrorOf([&] { openIdx(d, o); }),
            dir.file("t10k-labels-idx1-ubyte") +
                ": label 3 of sample 1 is not a class of the training set (0..2, from " +
                dir.file("train-labels-idx1-ubyte") + ")");
  writeSplit(dir, "t10k", 2, 3, {1});
  EXPECT_EQ(usageErrorOf([&] { openIdx(d, o); }), dir.file("t10k-images-idx3-ubyte.gz") +
                                                      ": the test images are 2x3 pixels but the training images (" +
                                                      dir.file("train-images-idx3-ubyte.gz") + ") are 2x2");
  writeIdx(dir.file("train-labels-idx1-ubyte"), IdxArray{{2}, {0, 1}}, false);
  EXPECT_EQ(usageErrorOf([&] { openIdx(d, o); }),
            "idx:" + d + ": train-images-idx3-ubyte.gz has 3 images but train-labels-idx1-ubyte has 2 labels");
}

// The statistics computed from Fashion-MNIST's training images are its well-known ones.
TEST(IdxDataset, FashionMnistStatistics) {
  if (!std::filesystem::is_directory(kDefaultDataDir))
    FAIL() << kDefaultDataDir << " is missing: install the Debian package dataset-fashion-mnist";
  TempDir dir;
  DataOptions o;
  o.source = std::string("idx:") + kDefaultDataDir;
  o.cacheDir = dir.path();
  const DatasetPair pair = openIdx(kDefaultDataDir, o);
  EXPECT_EQ(pair.train->size(), 60000);
  EXPECT_EQ(pair.test->size(), 10000);
  EXPECT_EQ(pair.train->spec().inputShape, (std::vector<int64_t>{1, 28, 28}));
  EXPECT_EQ(pair.train->spec().classes, 10);
  const auto entry = *std::filesystem::directory_iterator(dir.path());
  const auto j = nlohmann::json::parse(std::ifstream(entry.path()));
  EXPECT_NEAR(j.at("mean")[0].get<double>(), 0.2860, 5e-4);
  EXPECT_NEAR(j.at("std")[0].get<double>(), 0.3530, 5e-4);
}

}  // namespace
}  // namespace balancenet::data
