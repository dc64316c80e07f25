// Tests of imagefolder: layouts, the open's checks, augmentation seeds and split invariance, bad files later.
#include "balancenet/data/ImageFolderDataset.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "ImageFixtures.h"
#include "balancenet/core/Error.h"
#include "balancenet/data/IdxFile.h"
#include "testing/TempDir.h"
#include "testing/UsageErrors.h"

namespace balancenet::data {
namespace {

using balancenet::testing::TempDir;
using balancenet::testing::usageErrorOf;

// DIR/<class>/<i>.<ext> for each class: 11x9 random images of mode L or RGB, written by PIL.
void writeFolder(const std::string& dir, const std::string& classes, int perClass, const char* mode = "RGB",
                 const char* ext = "png") {
  writeTestImages(fmt::format("folder {} {} {} {} {}", dir, classes, perClass, mode, ext));
}

std::vector<Draw> draws(std::vector<int64_t> indices, uint64_t runSeed, int64_t epoch) {
  std::vector<Draw> out;
  for (int64_t i : indices) out.push_back({i, augmentSeed(runSeed, epoch, i)});
  return out;
}

TEST(ImageFolder, TrainAndValFolders) {
  TempDir dir;
  writeFolder(dir.file("train"), "cat,dog", 3);
  writeFolder(dir.file("val"), "cat,dog", 2, "RGB", "jpg");
  DataOptions options;
  const DatasetPair pair = openImageFolder(dir.path(), options);
  EXPECT_EQ(pair.train->size(), 6);
  EXPECT_EQ(pair.test->size(), 4);
  const DatasetSpec& spec = pair.train->spec();
  EXPECT_EQ(spec.inputShape, (std::vector<int64_t>{3, 32, 32}));
  EXPECT_EQ(spec.target, TargetKind::Class);
  EXPECT_EQ(spec.classes, 2);
  EXPECT_EQ(pair.train->classLabels(), (std::vector<int64_t>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(pair.test->classLabels(), (std::vector<int64_t>{0, 0, 1, 1}));
  const Batch b = pair.test->batch({3, 0});
  EXPECT_EQ(b.inputs.sizes(), (std::vector<int64_t>{2, 3, 32, 32}));
  EXPECT_EQ(b.inputs.dtype(), at::kFloat);
  EXPECT_EQ(b.targets.dtype(), at::kLong);
  EXPECT_EQ(b.targets[0].item<int64_t>(), 1);
  EXPECT_EQ(b.targets[1].item<int64_t>(), 0);
}

TEST(ImageFolder, ValFractionHoldsOutPerClassTheSameEveryTime) {
  TempDir dir;
  writeFolder(dir.path(), "a,b,c", 10, "L");
  DataOptions options;
  options.valFraction = 0.2;
  options.imageSize = 8;
  const DatasetPair pair = openImageFolder(dir.path(), options);
  EXPECT_EQ(pair.train->spec().inputShape, (std::vector<int64_t>{1, 8, 8}));  // every image gray
  EXPECT_EQ(pair.train->size(), 24);
  EXPECT_EQ(pair.test->classLabels(), (std::vector<int64_t>{0, 0, 1, 1, 2, 2}));
  const DatasetPair again = openImageFolder(dir.path(), options);
  const std::vector<int64_t> all{0, 1, 2, 3, 4, 5};
  EXPECT_TRUE(at::equal(pair.test->batch(all).inputs, again.test->batch(all).inputs));
  // Held-out and training images are different files: no test image equals a training one.
  const at::Tensor train = pair.train->batch(std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}).inputs;
  const at::Tensor test = pair.test->batch({0, 1}).inputs;
  for (int64_t i = 0; i < 8; ++i)
    for (int64_t j = 0; j < 2; ++j) EXPECT_FALSE(at::equal(train[i], test[j]));
}

TEST(ImageFolder, OneColourImageMakesEveryImageRgb) {
  TempDir dir;
  writeFolder(dir.path(), "a,b", 2, "L");
  writeFolder(dir.file("tmp"), "b", 1, "RGB");
  std::filesystem::rename(dir.file("tmp/b/0.png"), dir.file("b/colour.png"));
  std::filesystem::remove_all(dir.file("tmp"));
  DataOptions options;
  options.valFraction = 0;
  options.normalizeMean = {0};
  options.normalizeStd = {1};  // inputs = pixels / 255
  const DatasetPair pair = openImageFolder(dir.path(), options);
  EXPECT_EQ(pair.train->spec().inputShape[0], 3);
  EXPECT_EQ(pair.train->size(), 5);
  const at::Tensor gray = pair.train->batch({0}).inputs[0];  // a/0.png, repeated in three channels
  EXPECT_TRUE(at::equal(gray[0], gray[1]) && at::equal(gray[0], gray[2]));
  const at::Tensor colour = pair.train->batch({4}).inputs[0];  // b/colour.png
  EXPECT_FALSE(at::equal(colour[0], colour[1]));
}

TEST(ImageFolder, OpenRefusesBadFoldersAndFilesNamingThem) {
  TempDir dir;
  DataOptions options;
  EXPECT_NE(usageErrorOf([&] { openImageFolder(dir.file("nowhere"), options); }).find("no such directory"),
            std::string::npos);
  EXPECT_NE(usageErrorOf([&] { openImageFolder(dir.path(), options); }).find("no class folders"), std::string::npos);
  writeFolder(dir.path(), "a,b", 2);
  std::filesystem::create_directories(dir.file("c"));
  std::ofstream(dir.file("c/readme.txt")) << "not an image\n";
  const std::string empty = usageErrorOf([&] { openImageFolder(dir.path(), options); });
  EXPECT_NE(empty.find(dir.file("c")), std::string::npos) << empty;
  EXPECT_NE(empty.find("empty class folder"), std::string::npos) << empty;
  std::ofstream(dir.file("c/fake.PNG")) << "not an image either\n";  // the extension's case does not matter
  const std::string fake = usageErrorOf([&] { openImageFolder(dir.path(), options); });
  EXPECT_NE(fake.find(dir.file("c/fake.PNG")), std::string::npos) << fake;
  EXPECT_NE(fake.find("not a JPEG or PNG"), std::string::npos) << fake;
}

TEST(ImageFolder, ValClassesMustBeTrainsClasses) {
  TempDir dir;
  writeFolder(dir.file("train"), "cat,dog", 1);
  writeFolder(dir.file("val"), "cat,emu", 1);
  const std::string message = usageErrorOf([&] { openImageFolder(dir.path(), DataOptions{}); });
  EXPECT_NE(message.find("val/ has classes other than train/'s (dog in train/, emu in val/)"), std::string::npos)
      << message;
}

class AugmentedFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    writeFolder(dir_.path(), "a,b", 4);
    options_.valFraction = 0;
    options_.imageSize = 12;
    options_.augmentCrop = options_.augmentFlip = true;
    options_.cropPadding = 3;
  }
  TempDir dir_;
  DataOptions options_;
};

TEST_F(AugmentedFolder, SameSeedsSameTensorsInAnyGroupingAndThreadCount) {
  const auto ds = openImageFolder(dir_.path(), options_).train;
  const std::vector<Draw> all = draws({5, 1, 7, 2}, 9, 3);
  const Batch whole = ds->trainingBatch(all);
  EXPECT_TRUE(at::equal(whole.inputs, ds->trainingBatch(all).inputs));
  const Batch first = ds->trainingBatch({all[0], all[1]}), second = ds->trainingBatch({all[2], all[3]});
  EXPECT_TRUE(at::equal(whole.inputs, at::cat({first.inputs, second.inputs})));
  EXPECT_TRUE(at::equal(whole.targets, at::cat({first.targets, second.targets})));
  options_.loaderThreads = 3;
  EXPECT_TRUE(at::equal(whole.inputs, openImageFolder(dir_.path(), options_).train->trainingBatch(all).inputs));
  // Another epoch's seeds augment differently; batch() never augments.
  EXPECT_FALSE(at::equal(whole.inputs, ds->trainingBatch(draws({5, 1, 7, 2}, 9, 4)).inputs));
  options_.augmentCrop = options_.augmentFlip = false;
  const auto plain = openImageFolder(dir_.path(), options_).train;
  EXPECT_TRUE(at::equal(ds->batch({5, 1, 7, 2}).inputs, plain->trainingBatch(all).inputs));
  EXPECT_FALSE(at::equal(ds->batch({5, 1, 7, 2}).inputs, whole.inputs));
}

TEST_F(AugmentedFolder, StatisticsNormaliseTheTrainingSetAndAreCached) {
  TempDir run;
  options_.cacheDir = run.file("cache");
  const auto ds = openImageFolder(dir_.path(), options_).train;
  const at::Tensor x = ds->batch({0, 1, 2, 3, 4, 5, 6, 7}).inputs.to(at::kDouble);  // all 8: the whole sample
  for (int64_t c = 0; c < 3; ++c) {
    EXPECT_NEAR(x.select(1, c).mean().item<double>(), 0.0, 1e-5);
    EXPECT_NEAR(x.select(1, c).std(/*unbiased=*/false).item<double>(), 1.0, 1e-5);
  }
  int cached = 0;
  for (const auto& entry : std::filesystem::directory_iterator(options_.cacheDir))
    cached += entry.path().filename().string().rfind("normalization-", 0) == 0;
  EXPECT_EQ(cached, 1);
  options_.normalizeMean = {0.5};
  options_.normalizeStd = {0.25};
  const at::Tensor given = openImageFolder(dir_.path(), options_).train->batch({0}).inputs;
  EXPECT_LE(given.max().item<float>(), (1 - 0.5) / 0.25 + 1e-5);
  EXPECT_GE(given.min().item<float>(), (0 - 0.5) / 0.25 - 1e-5);
}

TEST_F(AugmentedFolder, AFileThatFailsLaterIsReplacedByTheNextOfItsClassAndCounted) {
  options_.augmentCrop = options_.augmentFlip = false;
  options_.loaderThreads = 2;
  const auto ds = openImageFolder(dir_.path(), options_).train;  // files 0..3 class a, 4..7 class b
  const at::Tensor next = ds->batch({2}).inputs;
  // Keep the header (the open's check passed), lose the rest: truncated after the open.
  std::vector<uint8_t> bytes = dir_.readRaw("a/1.png");
  bytes.resize(40);
  dir_.writeRaw("a/1.png", bytes);
  EXPECT_EQ(ds->skippedSamples(), 0);
  const Batch b = ds->batch({1, 5, 1});
  EXPECT_TRUE(at::equal(b.inputs[0], next[0]));
  EXPECT_TRUE(at::equal(b.inputs[2], next[0]));
  EXPECT_EQ(b.targets[0].item<int64_t>(), 0);
  EXPECT_EQ(ds->skippedSamples(), 1);  // one file, however often it is asked for
  // The last of a class wraps around to its first.
  std::vector<uint8_t> last = dir_.readRaw("a/3.png");
  last.resize(40);
  dir_.writeRaw("a/3.png", last);
  EXPECT_TRUE(at::equal(ds->batch({3}).inputs, ds->batch({0}).inputs));
  EXPECT_EQ(ds->skippedSamples(), 2);
}

TEST(ImageFolder, FashionMnistConverterWritesAFolderThatOpens) {
  const std::string source = kDefaultDataDir;
  if (!std::filesystem::exists(source + "/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  TempDir dir;
  const std::string command = std::string(BALANCENET_PYTHON_EXE) + " " + BALANCENET_SOURCE_DIR +
                              "/examples/fashion_mnist_to_imagefolder.py " + dir.path() + " --limit 20 >/dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  DataOptions options;
  options.imageSize = 28;
  options.normalizeMean = {0};
  options.normalizeStd = {1};  // inputs = pixels / 255
  const DatasetPair pair = openImageFolder(dir.path(), options);
  EXPECT_EQ(pair.train->size(), 20);
  EXPECT_EQ(pair.test->size(), 20);
  EXPECT_EQ(pair.train->spec().classes, 10);
  EXPECT_EQ(pair.train->spec().inputShape, (std::vector<int64_t>{1, 28, 28}));
  EXPECT_EQ(pair.train->classLabels()[19], 9);
  // Sample 0 is the first name, sorted, in 0_tshirt_top/: "<i>.png", image i of the IDX file, pixel for pixel.
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("train/0_tshirt_top")))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  const int64_t i = std::stoll(names.at(0));
  const IdxArray idx = readIdx(source + "/train-images-idx3-ubyte.gz", 3);
  const at::Tensor want = at::from_blob(const_cast<uint8_t*>(idx.data.data()) + i * 28 * 28, {28, 28}, at::kByte);
  const at::Tensor got = pair.train->batch({0}).inputs[0][0].mul(255).round().to(at::kByte);
  EXPECT_TRUE(at::equal(got, want));
}

}  // namespace
}  // namespace balancenet::data
