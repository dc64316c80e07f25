// Tests of the cifar10: format on small batch files written by numpy in CIFAR-10's documented layout.
#include "balancenet/data/Cifar10Dataset.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <filesystem>

#include "testing/DataFiles.h"
#include "testing/NumpyScript.h"
#include "testing/TempDir.h"
#include "testing/UsageErrors.h"

namespace balancenet::data {
namespace {

using balancenet::testing::TempDir;
using balancenet::testing::usageErrorOf;

// The image a user thinks of, [32, 32, 3] (HWC, RGB), as a formula both sides evaluate.
int pixel(int64_t sample, int64_t y, int64_t x, int64_t c) {
  return static_cast<int>((sample * 7 + y * 32 + x * 3 + c * 50) % 256);
}

std::string writeBatches(const TempDir& dir, int perBatch, const std::string& folder) {
  return balancenet::testing::writeCifar10Batches(dir.path(), perBatch, folder);
}

DataOptions unitNormalization() {
  DataOptions o;
  o.normalizeMean = {0.0};
  o.normalizeStd = {1.0};
  return o;
}

TEST(Cifar10Dataset, PlanesBecomeChannels) {
  REQUIRE_NUMPY();
  TempDir dir;
  ASSERT_EQ(writeBatches(dir, 3, "."), "");
  DataOptions o = unitNormalization();
  o.source = "cifar10:" + dir.path();
  const DatasetPair pair = openCifar10(dir.path(), o);
  EXPECT_EQ(pair.train->spec().inputShape, (std::vector<int64_t>{3, 32, 32}));
  EXPECT_EQ(pair.train->spec().classes, 10);
  EXPECT_EQ(pair.train->spec().target, TargetKind::Class);
  ASSERT_EQ(pair.train->size(), 15);
  ASSERT_EQ(pair.test->size(), 3);
  const Batch b = pair.train->batch({0, 7, 14});
  const Batch t = pair.test->batch({2});
  for (int64_t k = 0; k < 3; ++k) {
    const int64_t s = std::vector<int64_t>{0, 7, 14}[static_cast<size_t>(k)];
    EXPECT_EQ(b.targets[k].item<int64_t>(), s % 10);
    for (int64_t c = 0; c < 3; ++c)
      for (auto [y, x] : {std::pair<int64_t, int64_t>{0, 0}, {0, 31}, {5, 9}, {31, 31}})
        EXPECT_FLOAT_EQ(b.inputs[k][c][y][x].item<float>(), pixel(s, y, x, c) / 255.0f)
            << "sample " << s << " c" << c << " y" << y << " x" << x;
  }
  // Test sample 2 is number 17.
  EXPECT_EQ(t.targets[0].item<int64_t>(), 7);
  EXPECT_FLOAT_EQ(t.inputs[0][1][3][4].item<float>(), pixel(17, 3, 4, 1) / 255.0f);
}

TEST(Cifar10Dataset, ArchiveFolderAndPerChannelStatistics) {
  REQUIRE_NUMPY();
  TempDir dir;
  ASSERT_EQ(writeBatches(dir, 2, "cifar-10-batches-bin"), "");
  DataOptions o;
  o.source = "cifar10:" + dir.path();
  const DatasetPair pair = openCifar10(dir.path(), o);
  ASSERT_EQ(pair.train->size(), 10);
  const at::Tensor x = pair.train->batch({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}).inputs.to(at::kDouble);
  const at::Tensor perChannel = x.transpose(0, 1).reshape({3, -1});
  for (int64_t c = 0; c < 3; ++c) {
    EXPECT_NEAR(perChannel[c].mean().item<double>(), 0.0, 1e-5) << "channel " << c;
    EXPECT_NEAR(perChannel[c].var(/*unbiased=*/false).item<double>(), 1.0, 1e-4) << "channel " << c;
  }
}

TEST(Cifar10Dataset, DefectsNameTheFile) {
  REQUIRE_NUMPY();
  TempDir dir;
  const DataOptions o = unitNormalization();
  EXPECT_EQ(usageErrorOf([&] { openCifar10(dir.path(), o); }),
            "cifar10:" + dir.path() +
                ": no data_batch_1.bin here or in cifar-10-batches-bin/ (the binary version of CIFAR-10)");
  ASSERT_EQ(writeBatches(dir, 2, "."), "");
  std::filesystem::remove(dir.file("test_batch.bin"));
  EXPECT_EQ(usageErrorOf([&] { openCifar10(dir.path(), o); }), dir.file("test_batch.bin") + ": no such file");

  std::vector<uint8_t> record(kCifarRecordBytes, 0);
  dir.writeRaw("test_batch.bin", std::vector<uint8_t>(record.begin(), record.end() - 1));
  EXPECT_EQ(usageErrorOf([&] { openCifar10(dir.path(), o); }),
            dir.file("test_batch.bin") +
                ": 3072 bytes is not a whole number of 3073-byte records (1 label byte and 3x32x32 pixels): not a "
                "CIFAR-10 binary batch");
  std::vector<uint8_t> two = record;
  two.insert(two.end(), record.begin(), record.end());
  two[kCifarRecordBytes] = 10;
  dir.writeRaw("data_batch_3.bin", two);
  EXPECT_EQ(usageErrorOf([&] { openCifar10(dir.path(), o); }),
            dir.file("data_batch_3.bin") + ": label 10 of record 1 is out of range 0..9");
  dir.writeRaw("data_batch_3.bin", {});
  EXPECT_EQ(usageErrorOf([&] { openCifar10(dir.path(), o); }),
            dir.file("data_batch_3.bin") + ": empty file, expected CIFAR-10 records");
}

}  // namespace
}  // namespace balancenet::data
