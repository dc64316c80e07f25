// Tests of openDataset: FORMAT:PATH dispatch, a bare directory as idx, and the messages for bad sources.
#include "balancenet/data/OpenDataset.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "balancenet/data/IdxFile.h"
#include "testing/TempDir.h"
#include "testing/UsageErrors.h"

namespace balancenet::data {
namespace {

using balancenet::testing::TempDir;
using balancenet::testing::usageErrorOf;

DataOptions sourced(const std::string& source) {
  DataOptions o;
  o.source = source;
  o.context = 3;
  o.normalizeMean = {0.5};
  o.normalizeStd = {0.5};
  return o;
}

void writeIdxDir(const std::string& dir) {
  std::filesystem::create_directories(dir);
  for (const char* prefix : {"train", "t10k"}) {
    writeIdx(dir + "/" + prefix + "-images-idx3-ubyte", IdxArray{{2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}}, false);
    writeIdx(dir + "/" + prefix + "-labels-idx1-ubyte", IdxArray{{2}, {0, 3}}, false);
  }
}

TEST(OpenDataset, FormatNames) {
  EXPECT_EQ(formatNames(),
            (std::vector<std::string>{"idx", "imagefolder", "cifar10", "npy", "tokens", "tokens32", "text"}));
}

TEST(OpenDataset, DispatchesByFormatAndTakesABareDirectoryAsIdx) {
  TempDir dir;
  dir.writeRaw("a.txt", std::vector<uint8_t>(20, 'a'));
  const DatasetPair text = openDataset(sourced("text:" + dir.file("a.txt")));
  EXPECT_TRUE(text.train->spec().bytesAsTokens);
  EXPECT_EQ(text.train->spec().source, "text:" + dir.file("a.txt"));

  // A directory with a ':' in its name is still a directory.
  for (const std::string& d : {dir.file("mnist"), dir.file("run:1")}) {
    writeIdxDir(d);
    for (const std::string& source : {"idx:" + d, d}) {
      const DatasetPair idx = openDataset(sourced(source));
      EXPECT_EQ(idx.train->spec().inputShape, (std::vector<int64_t>{1, 2, 2})) << source;
      EXPECT_EQ(idx.train->spec().classes, 4) << source;
      EXPECT_EQ(idx.train->spec().source, source);
      // --normalize 0.5,0.5 maps pixel 255 to 1 and 0 to -1.
      EXPECT_FLOAT_EQ(idx.train->batch({0}).inputs[0][0][0][0].item<float>(), -1.0f);
    }
  }
}

TEST(OpenDataset, BadSources) {
  TempDir dir;
  EXPECT_EQ(usageErrorOf([&] { openDataset(sourced("csv:" + dir.file("a.csv"))); }),
            "--data csv:" + dir.file("a.csv") +
                ": unknown format 'csv'; the formats are idx, imagefolder, cifar10, npy, tokens, tokens32, text");
  EXPECT_EQ(usageErrorOf([&] { openDataset(sourced(dir.file("nowhere"))); }),
            "--data " + dir.file("nowhere") +
                ": no such directory; give FORMAT:PATH with a format of idx, imagefolder, cifar10, npy, tokens, "
                "tokens32, text");
  EXPECT_EQ(usageErrorOf([&] { openDataset(sourced("tokens:")); }), "--data tokens:: no path after 'tokens:'");
  EXPECT_EQ(usageErrorOf([&] { openDataset(sourced("text:" + dir.file("none.txt"))); }),
            dir.file("none.txt") + ": no such file");
  EXPECT_EQ(usageErrorOf([&] { openDataset(sourced("tokens:" + dir.path())); }), dir.path() + ": not a regular file");
}

}  // namespace
}  // namespace balancenet::data
