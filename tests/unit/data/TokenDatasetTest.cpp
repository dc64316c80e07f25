// Tests of the token formats: windows and next-token targets, the held-out end, llm.c headers, defects.
#include "balancenet/data/TokenDataset.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "testing/NumpyScript.h"
#include "testing/TempDir.h"
#include "testing/UsageErrors.h"

namespace balancenet::data {
namespace {

using balancenet::testing::runNumpy;
using balancenet::testing::TempDir;
using balancenet::testing::usageErrorOf;

// Token i of the test streams: (i * 37 + 11) % 1000, or + 70000 for the uint32 ones.
int64_t token(int64_t i, int64_t base = 0) { return (i * 37 + 11) % 1000 + base; }

const char* kTokenFiles = R"(
t = (np.arange(50) * 37 + 11) % 1000
t.astype(np.uint16).tofile(d + '/flat.bin')
(t + 70000).astype(np.uint32).tofile(d + '/flat32.bin')
def llmc(name, version, tokens, count=None):
    header = np.zeros(256, dtype=np.int32)
    header[0], header[1], header[2] = 20240520, version, len(tokens) if count is None else count
    with open(d + '/' + name, 'wb') as f:
        f.write(header.tobytes())
        f.write(tokens.tobytes())
llmc('v1.bin', 1, t.astype(np.uint16))
llmc('v2.bin', 2, (t + 70000).astype(np.uint32))
llmc('v3.bin', 3, t.astype(np.uint16))
llmc('wrongcount.bin', 1, t.astype(np.uint16), count=60)
)";

DataOptions withContext(int64_t t, double valFraction = 0.1) {
  DataOptions o;
  o.context = t;
  o.valFraction = valFraction;
  return o;
}

// Window w of a split starting at token `first`: inputs tokens [first + w*T, +T), targets one later.
void expectWindows(const Dataset& ds, int64_t first, int64_t t, int64_t base) {
  std::vector<int64_t> all(static_cast<size_t>(ds.size()));
  for (size_t w = 0; w < all.size(); ++w) all[w] = static_cast<int64_t>(w);
  const Batch b = ds.batch(all);
  ASSERT_EQ(b.inputs.sizes(), (std::vector<int64_t>{ds.size(), t}));
  ASSERT_EQ(b.targets.sizes(), (std::vector<int64_t>{ds.size(), t}));
  ASSERT_EQ(b.inputs.scalar_type(), at::kLong);
  ASSERT_EQ(b.targets.scalar_type(), at::kLong);
  for (int64_t w = 0; w < ds.size(); ++w)
    for (int64_t j = 0; j < t; ++j) {
      ASSERT_EQ(b.inputs[w][j].item<int64_t>(), token(first + w * t + j, base)) << "window " << w << " pos " << j;
      ASSERT_EQ(b.targets[w][j].item<int64_t>(), token(first + w * t + j + 1, base)) << "window " << w;
    }
}

// 50 tokens, T = 4: 12 windows in all, round(1.2) = 1 held out: the last 5 tokens (45..49); the 45
// before hold (45 - 1) / 4 = 11 training windows.
TEST(TokenDataset, FlatUint16AndLlmcFilesGiveTheSameWindows) {
  REQUIRE_NUMPY();
  TempDir dir;
  ASSERT_EQ(runNumpy(dir.path(), kTokenFiles), "");
  for (const char* name : {"flat.bin", "v1.bin"}) {
    DataOptions o = withContext(4);
    o.source = std::string("tokens:") + dir.file(name);
    const DatasetPair pair = openTokens(dir.file(name), o);
    const DatasetSpec& spec = pair.train->spec();
    EXPECT_EQ(spec.inputShape, (std::vector<int64_t>{4}));
    EXPECT_EQ(spec.targetShape, (std::vector<int64_t>{4}));
    EXPECT_TRUE(spec.tokenInput);
    EXPECT_EQ(spec.target, TargetKind::Tokens);
    EXPECT_FALSE(spec.bytesAsTokens);
    EXPECT_EQ(spec.source, o.source);
    // Largest id 973 -> 974 rounded up to a multiple of 64.
    EXPECT_EQ(spec.classes, 1024) << name;
    EXPECT_TRUE(pair.train->classLabels().empty());
    ASSERT_EQ(pair.train->size(), 11) << name;
    ASSERT_EQ(pair.test->size(), 1) << name;
    expectWindows(*pair.train, 0, 4, 0);
    expectWindows(*pair.test, 45, 4, 0);
  }
}

TEST(TokenDataset, Uint32TokensFromLlmcVersion2AndTokens32) {
  REQUIRE_NUMPY();
  TempDir dir;
  ASSERT_EQ(runNumpy(dir.path(), kTokenFiles), "");
  const DatasetPair v2 = openTokens(dir.file("v2.bin"), withContext(7, 0));
  const DatasetPair flat = openTokens32(dir.file("flat32.bin"), withContext(7, 0));
  for (const DatasetPair* pair : {&v2, &flat}) {
    // Largest id 70973 + 1 rounded up to a multiple of 64; (50 - 1) / 7 = 7 windows, none held out.
    EXPECT_EQ(pair->train->spec().classes, 70976);
    ASSERT_EQ(pair->train->size(), 7);
    EXPECT_EQ(pair->test->size(), 0);
    expectWindows(*pair->train, 0, 7, 70000);
  }
}

TEST(TokenDataset, TextBytesAreTokens) {
  TempDir dir;
  const std::string text = "It was the best of times, it was the worst of times.";  // 52 bytes
  dir.writeRaw("t.txt", std::vector<uint8_t>(text.begin(), text.end()));
  DataOptions o = withContext(5, 0.2);
  const DatasetPair pair = openText(dir.file("t.txt"), o);
  const DatasetSpec& spec = pair.train->spec();
  EXPECT_EQ(spec.classes, 256);
  EXPECT_TRUE(spec.bytesAsTokens);
  EXPECT_TRUE(spec.tokenInput);
  // (52 - 1) / 5 = 10 windows, 2 held out: tokens 41..51; (41 - 1) / 5 = 8 for training.
  ASSERT_EQ(pair.train->size(), 8);
  ASSERT_EQ(pair.test->size(), 2);
  const Batch b = pair.train->batch({1});
  for (int64_t j = 0; j < 5; ++j) {
    EXPECT_EQ(b.inputs[0][j].item<int64_t>(), static_cast<uint8_t>(text[static_cast<size_t>(5 + j)]));
    EXPECT_EQ(b.targets[0][j].item<int64_t>(), static_cast<uint8_t>(text[static_cast<size_t>(6 + j)]));
  }
  const Batch t = pair.test->batch({1});
  EXPECT_EQ(t.inputs[0][0].item<int64_t>(), 't');   // byte 46
  EXPECT_EQ(t.targets[0][4].item<int64_t>(), '.');  // byte 51, the last
}

TEST(TokenDataset, DefectsNameTheFile) {
  REQUIRE_NUMPY();
  TempDir dir;
  ASSERT_EQ(runNumpy(dir.path(), kTokenFiles), "");
  const auto f = [&](const std::string& name) { return dir.file(name) + ": "; };
  EXPECT_EQ(usageErrorOf([&] { openTokens(dir.file("flat.bin"), withContext(0)); }),
            "tokens:" + dir.file("flat.bin") + ": --context is required (the window length in tokens, at least 1)");
  EXPECT_EQ(usageErrorOf([&] { openText(dir.file("flat.bin"), withContext(-3)); }),
            "text:" + dir.file("flat.bin") + ": --context is required (the window length in tokens, at least 1)");
  EXPECT_EQ(usageErrorOf([&] { openTokens(dir.file("flat.bin"), withContext(30)); }),
            f("flat.bin") + "50 tokens hold no whole window of --context 30 for training and held-out (62 needed)");
  EXPECT_EQ(usageErrorOf([&] { openTokens(dir.file("flat.bin"), withContext(50, 0)); }),
            f("flat.bin") + "50 tokens hold no whole window of --context 50 for training (51 needed)");
  EXPECT_EQ(usageErrorOf([&] { openTokens(dir.file("v3.bin"), withContext(4)); }),
            f("v3.bin") + "llm.c token file of version 3; versions 1 (uint16) and 2 (uint32) exist");
  EXPECT_EQ(
      usageErrorOf([&] { openTokens(dir.file("wrongcount.bin"), withContext(4)); }),
      f("wrongcount.bin") +
          "the llm.c header announces 60 tokens of 2 bytes (1144 bytes with the header), the file has 1124 bytes");
  dir.writeRaw("odd.bin", {1, 0, 2});
  EXPECT_EQ(usageErrorOf([&] { openTokens(dir.file("odd.bin"), withContext(1)); }),
            f("odd.bin") + "3 bytes is not a whole number of 2-byte tokens");
  // Read as uint32, uint16 tokens 6 and 7 (233, 270) make id 270 * 65536 + 233, beyond 2^24.
  EXPECT_EQ(usageErrorOf([&] { openTokens32(dir.file("flat.bin"), withContext(1)); }),
            f("flat.bin") + "token 3 is id 17694953, beyond any vocabulary (2^24): not a file of token ids");
  dir.writeRaw("empty.txt", {});
  EXPECT_EQ(usageErrorOf([&] { openText(dir.file("empty.txt"), withContext(1, 0)); }),
            f("empty.txt") + "0 tokens hold no whole window of --context 1 for training (2 needed)");
  EXPECT_EQ(usageErrorOf([&] { openText(dir.file("none.txt"), withContext(1)); }), f("none.txt") + "no such file");
}

}  // namespace
}  // namespace balancenet::data
