// Tests of IdxFile: round trips and every way a file can be malformed.
#include "balancenet/data/IdxFile.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "balancenet/core/Error.h"
#include "testing/TempDir.h"

namespace balancenet::data {
namespace {

using balancenet::testing::TempDir;

std::vector<uint8_t> header(uint32_t magic, const std::vector<uint32_t>& dims) {
  std::vector<uint8_t> out;
  auto put = [&](uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(v >> shift));
  };
  put(magic);
  for (uint32_t d : dims) put(d);
  return out;
}

std::vector<uint8_t> withPayload(std::vector<uint8_t> bytes, size_t payload) {
  for (size_t i = 0; i < payload; ++i) bytes.push_back(static_cast<uint8_t>(i * 7));
  return bytes;
}

IdxArray randomArray(std::vector<int64_t> dims, uint32_t seed) {
  IdxArray a{std::move(dims), {}};
  int64_t n = 1;
  for (int64_t d : a.dims) n *= d;
  std::mt19937 gen(seed);
  for (int64_t i = 0; i < n; ++i) a.data.push_back(static_cast<uint8_t>(gen()));
  return a;
}

// The call must throw UsageError whose message is one line, names the file and contains `expected`.
void expectUsageError(const std::function<void()>& call, const std::string& path, const std::string& expected) {
  try {
    call();
    ADD_FAILURE() << "no UsageError; expected one containing '" << expected << "'";
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << "message does not start with the path: " << msg;
    EXPECT_NE(msg.find(expected), std::string::npos) << "message: " << msg << "\nexpected to contain: " << expected;
  }
}

TEST(IdxFile, RoundTripPlainImages) {
  TempDir dir;
  const IdxArray a = randomArray({5, 3, 4}, 1);
  writeIdx(dir.file("img"), a, false);
  const auto raw = dir.readRaw("img");
  ASSERT_EQ(raw.size(), 16u + 60u);
  EXPECT_EQ(std::vector<uint8_t>(raw.begin(), raw.begin() + 8), (std::vector<uint8_t>{0, 0, 8, 3, 0, 0, 0, 5}));
  const IdxArray b = readIdx(dir.file("img"), 3);
  EXPECT_EQ(b.dims, a.dims);
  EXPECT_EQ(b.data, a.data);
}

TEST(IdxFile, RoundTripGzipImagesAndLabels) {
  TempDir dir;
  const IdxArray images = randomArray({7, 28, 28}, 2);
  const IdxArray labels = randomArray({7}, 3);
  writeIdx(dir.file("img.gz"), images, true);
  writeIdx(dir.file("lbl.gz"), labels, true);
  const auto raw = dir.readRaw("img.gz");
  ASSERT_GE(raw.size(), 2u);
  EXPECT_EQ(raw[0], 0x1f);  // gzip magic: the file really is compressed
  EXPECT_EQ(raw[1], 0x8b);
  const IdxArray readImages = readIdx(dir.file("img.gz"), 3);
  EXPECT_EQ(readImages.dims, images.dims);
  EXPECT_EQ(readImages.data, images.data);
  const IdxArray readLabels = readIdx(dir.file("lbl.gz"), 1);
  EXPECT_EQ(readLabels.dims, labels.dims);
  EXPECT_EQ(readLabels.data, labels.data);
}

TEST(IdxFile, BadMagicNamesFoundAndExpected) {
  TempDir dir;
  auto p = dir.writeRaw("f", withPayload(header(0x00000802, {2, 2, 2}), 8));
  expectUsageError([&] { readIdx(p, 3); }, p, "bad magic 0x00000802, expected 0x00000803 (an MNIST image file)");
}

TEST(IdxFile, LabelFileGivenAsImagesIsRejected) {
  TempDir dir;
  const std::string p = dir.file("labels");
  writeIdx(p, randomArray({10}, 4), false);
  expectUsageError([&] { readIdx(p, 3); }, p, "bad magic 0x00000801, expected 0x00000803");
  const std::string q = dir.file("images.gz");
  writeIdx(q, randomArray({2, 2, 2}, 5), true);
  expectUsageError([&] { readIdx(q, 1); }, q, "bad magic 0x00000803, expected 0x00000801 (an MNIST label file)");
}

TEST(IdxFile, NonIdxFileIsRejected) {
  TempDir dir;
  auto p = dir.writeRaw("f", {'P', 'K', 3, 4, 0, 0, 0, 1, 0});
  expectUsageError([&] { readIdx(p, 1); }, p, "bad magic 0x504B0304");
}

TEST(IdxFile, WrongTypeByte) {
  TempDir dir;
  auto p = dir.writeRaw("f", withPayload(header(0x00000D03, {2, 2, 2}), 32));
  expectUsageError([&] { readIdx(p, 3); }, p, "element type 0x0D is not 0x08");
}

TEST(IdxFile, TruncatedPayloadPlainAndGzip) {
  TempDir dir;
  for (bool gz : {false, true}) {
    auto p = dir.writeRaw(gz ? "f.gz" : "f", withPayload(header(0x00000803, {2, 3, 4}), 10), gz);
    expectUsageError([&] { readIdx(p, 3); }, p, "truncated: expected 24 bytes of pixels, found 10");
  }
}

TEST(IdxFile, TruncatedGzipStream) {
  TempDir dir;
  const std::string p = dir.file("f.gz");
  writeIdx(p, randomArray({50, 28, 28}, 6), true);
  auto raw = dir.readRaw("f.gz");
  raw.resize(raw.size() / 2);
  dir.writeRaw("f.gz", raw);
  expectUsageError([&] { readIdx(p, 3); }, p, "truncated: expected 39200 bytes of pixels, found ");
}

TEST(IdxFile, TruncatedHeader) {
  TempDir dir;
  auto p = dir.writeRaw("f", {0, 0, 8, 3, 0, 0, 0, 2, 0, 0});
  expectUsageError([&] { readIdx(p, 3); }, p, "truncated header: expected 12 bytes of dims, found 6");
  auto q = dir.writeRaw("g", {0, 0, 8});
  expectUsageError([&] { readIdx(q, 3); }, q, "too short for an IDX header");
  auto e = dir.writeRaw("empty", {});
  expectUsageError([&] { readIdx(e, 1); }, e, "empty file");
}

TEST(IdxFile, TrailingBytesPlainAndGzip) {
  TempDir dir;
  for (bool gz : {false, true}) {
    auto p = dir.writeRaw(gz ? "f.gz" : "f", withPayload(header(0x00000801, {5}), 8), gz);
    expectUsageError([&] { readIdx(p, 1); }, p, "3 trailing bytes after the 5 bytes of labels");
  }
}

TEST(IdxFile, ZeroDim) {
  TempDir dir;
  auto p = dir.writeRaw("f", header(0x00000803, {2, 0, 4}));
  expectUsageError([&] { readIdx(p, 3); }, p, "dims 2x0x4: dim 1 is zero");
}

TEST(IdxFile, AbsurdDimsDoNotAllocate) {
  TempDir dir;
  auto p = dir.writeRaw("f", withPayload(header(0x00000803, {0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}), 4));
  expectUsageError([&] { readIdx(p, 3); }, p, "implausibly large");
  auto q = dir.writeRaw("g", withPayload(header(0x00000803, {60000, 1000, 1000}), 100));
  expectUsageError([&] { readIdx(q, 3); }, q, "truncated: expected 60000000000 bytes of pixels, found 100");
}

TEST(IdxFile, MissingFileAndDirectory) {
  TempDir dir;
  const std::string missing = dir.file("train-images-idx3-ubyte.gz");
  expectUsageError([&] { readIdx(missing, 3); }, missing, "no such file");
  expectUsageError([&] { readIdx(dir.path(), 3); }, dir.path(), "not a regular file");
}

TEST(IdxFile, WriteRejectsInconsistentArrays) {
  TempDir dir;
  const std::string p = dir.file("f");
  expectUsageError([&] { writeIdx(p, IdxArray{{2, 3}, std::vector<uint8_t>(5)}, false); }, p, "need 6 bytes");
  expectUsageError([&] { writeIdx(p, IdxArray{{0}, {}}, false); }, p, "cannot write dim 0 = 0");
  expectUsageError(
      [&] {
        writeIdx(dir.file("no/such/dir"), IdxArray{{1}, {0}}, true);
      },
      dir.file("no/such/dir"), "cannot create");
}

}  // namespace
}  // namespace balancenet::data
