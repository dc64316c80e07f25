// Tests of ImageDecode against PIL: every PNG mode exactly, JPEG within 1, and bad files as errors naming them.
#include "balancenet/data/ImageDecode.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "ImageFixtures.h"
#include "balancenet/core/Error.h"
#include "testing/TempDir.h"
#include "testing/UsageErrors.h"

namespace balancenet::data {
namespace {

using balancenet::testing::TempDir;
using balancenet::testing::usageErrorOf;

class ImageDecode : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<TempDir>();
    writeTestImages("decode " + dir_->path());
  }
  static void TearDownTestSuite() { dir_.reset(); }
  static std::string file(const std::string& name) { return dir_->file(name); }

  // The largest difference from PIL's pixels, after checking the shapes agree.
  static int maxDifference(const std::string& name) {
    const Image got = decodeImage(file(name));
    const Image want = readReference(file(name) + ".ref");
    EXPECT_EQ(got.height, want.height) << name;
    EXPECT_EQ(got.width, want.width) << name;
    EXPECT_EQ(got.channels, want.channels) << name;
    if (got.pixels.size() != want.pixels.size()) return 256;
    int worst = 0;
    for (size_t i = 0; i < got.pixels.size(); ++i) worst = std::max(worst, std::abs(got.pixels[i] - want.pixels[i]));
    return worst;
  }
  static std::unique_ptr<TempDir> dir_;
};
std::unique_ptr<TempDir> ImageDecode::dir_;

TEST_F(ImageDecode, PngEqualsPilInEveryMode) {
  for (const char* name :
       {"gray.png", "gray_alpha.png", "rgb.png", "rgba.png", "palette.png", "bilevel.png", "gray16.png"})
    EXPECT_EQ(maxDifference(name), 0) << name;
}

TEST_F(ImageDecode, JpegWithinOneOfPil) {
  for (const char* name : {"gray.jpg", "rgb.jpg", "smooth.jpg", "progressive.jpg", "no_subsampling.jpg"})
    EXPECT_LE(maxDifference(name), 1) << name;
}

TEST_F(ImageDecode, JpegDecodedAtAReducedScaleEqualsPilsDraft) {
  const Image full = decodeImage(file("large.jpg"));
  EXPECT_EQ(full.height, 64);
  EXPECT_EQ(full.width, 80);
  const Image scaled = decodeImage(file("large.jpg"), /*minSide=*/16);
  const Image want = readReference(file("large.jpg") + ".draft16.ref");
  ASSERT_EQ(scaled.height, 16);  // 1/4: the smallest scale keeping 16 pixels on the shorter side
  ASSERT_EQ(scaled.width, 20);
  ASSERT_EQ(want.height, 16);
  ASSERT_EQ(want.width, 20);
  int worst = 0;
  for (size_t i = 0; i < scaled.pixels.size(); ++i)
    worst = std::max(worst, std::abs(scaled.pixels[i] - want.pixels[i]));
  EXPECT_LE(worst, 1);
  EXPECT_EQ(decodeImage(file("large.jpg"), 17).height, 32);   // 1/4 would give 16 < 17: 1/2
  EXPECT_EQ(decodeImage(file("large.jpg"), 100).height, 64);  // larger than the image: whole
}

TEST_F(ImageDecode, HeaderGivesSizeAndChannelsWithoutDecoding) {
  const struct {
    const char* name;
    ImageFormat format;
    int64_t channels;
  } cases[] = {{"gray.png", ImageFormat::Png, 1},        {"gray_alpha.png", ImageFormat::Png, 1},
               {"rgba.png", ImageFormat::Png, 3},        {"palette.png", ImageFormat::Png, 3},
               {"gray16.png", ImageFormat::Png, 1},      {"gray.jpg", ImageFormat::Jpeg, 1},
               {"progressive.jpg", ImageFormat::Jpeg, 3}};
  for (const auto& c : cases) {
    const ImageHeader h = readImageHeader(file(c.name));
    EXPECT_EQ(h.format, c.format) << c.name;
    EXPECT_EQ(h.height, 13) << c.name;
    EXPECT_EQ(h.width, 17) << c.name;
    EXPECT_EQ(h.channels, c.channels) << c.name;
  }
}

TEST_F(ImageDecode, FormatComesFromTheBytesNotTheName) {
  TempDir dir;
  const std::vector<uint8_t> png = dir_->readRaw("rgb.png"), jpeg = dir_->readRaw("rgb.jpg");
  EXPECT_EQ(decodeImage(dir.writeRaw("actually_png.jpg", png)).channels, 3);
  EXPECT_EQ(readImageHeader(dir.writeRaw("actually_jpeg.png", jpeg)).format, ImageFormat::Jpeg);
}

TEST_F(ImageDecode, TruncatedJpegIsAnErrorNamingTheFile) {
  TempDir dir;
  std::vector<uint8_t> bytes = dir_->readRaw("rgb.jpg");
  bytes.resize(bytes.size() / 2);
  const std::string path = dir.writeRaw("cut.jpg", bytes);
  const std::string message = usageErrorOf([&] { decodeImage(path); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;
  // Cut inside the header: the open's header check already refuses it.
  bytes.resize(40);
  const std::string header = dir.writeRaw("header.jpg", bytes);
  EXPECT_NE(usageErrorOf([&] { readImageHeader(header); }).find(header), std::string::npos);
}

TEST_F(ImageDecode, TruncatedOrCorruptPngIsAnErrorNamingTheFile) {
  TempDir dir;
  std::vector<uint8_t> bytes = dir_->readRaw("rgb.png");
  bytes.resize(bytes.size() - 30);
  const std::string cut = dir.writeRaw("cut.png", bytes);
  EXPECT_NE(usageErrorOf([&] { decodeImage(cut); }).find(cut), std::string::npos);
  bytes = dir_->readRaw("rgb.png");
  for (size_t i = 60; i < bytes.size() - 20; i += 7) bytes[i] ^= 0x5A;  // the compressed pixels
  const std::string garbled = dir.writeRaw("garbled.png", bytes);
  EXPECT_NE(usageErrorOf([&] { decodeImage(garbled); }).find(garbled), std::string::npos);
}

TEST_F(ImageDecode, TextFileNamedPngIsAnErrorNamingTheFile) {
  TempDir dir;
  const std::string text = "not an image at all\n";
  const std::string path = dir.writeRaw("notes.png", std::vector<uint8_t>(text.begin(), text.end()));
  for (const std::string& message :
       {usageErrorOf([&] { readImageHeader(path); }), usageErrorOf([&] { decodeImage(path); })}) {
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("not a JPEG or PNG"), std::string::npos) << message;
  }
  EXPECT_NE(usageErrorOf([&] { readImageHeader(dir.file("missing.png")); }).find("missing.png"), std::string::npos);
}

}  // namespace
}  // namespace balancenet::data
