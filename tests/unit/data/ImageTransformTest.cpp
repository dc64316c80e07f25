// Tests of ImageTransform: resize against torch's interpolate, PIL's gray conversion, the seeded crop and flip.
#include "balancenet/data/ImageTransform.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <tuple>

#include "ImageFixtures.h"
#include "testing/TempDir.h"

namespace balancenet::data {
namespace {

using balancenet::testing::TempDir;

int maxDifference(const Image& got, const Image& want) {
  EXPECT_EQ(got.height, want.height);
  EXPECT_EQ(got.width, want.width);
  EXPECT_EQ(got.channels, want.channels);
  if (got.pixels.size() != want.pixels.size()) return 256;
  int worst = 0;
  for (size_t i = 0; i < got.pixels.size(); ++i) worst = std::max(worst, std::abs(got.pixels[i] - want.pixels[i]));
  return worst;
}

// Pixel (y, x, c) = 10 * y + x + 100 * c of an h x w image: every value tells where it came from.
Image positions(int64_t h, int64_t w, int64_t c) {
  Image image{h, w, c, {}};
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      for (int64_t ch = 0; ch < c; ++ch) image.pixels.push_back(static_cast<uint8_t>(10 * y + x + 100 * ch));
  return image;
}

TEST(ImageTransform, ResizeMatchesTorchInterpolate) {
  TempDir dir;
  writeTestImages("resize " + dir.path());
  for (const char* name : {"up", "down", "mixed", "same_rows"}) {
    const Image input = readReference(dir.file(std::string(name) + ".in.ref"));
    EXPECT_LE(maxDifference(resizeImage(input, 16), readReference(dir.file(std::string(name) + ".ref"))), 1) << name;
  }
}

TEST(ImageTransform, ResizeKeepsAnImageOfTheSizeAndAveragesWhenHalving) {
  const Image image = positions(4, 4, 1);
  EXPECT_EQ(resizeImage(image, 4).pixels, image.pixels);
  const Image half = resizeImage(image, 2);  // means of 2x2 cells: (0+1+10+11)/4 = 5.5 -> 6, ...
  EXPECT_EQ(half.pixels, (std::vector<uint8_t>{6, 8, 26, 28}));
}

TEST(ImageTransform, ChannelConversionMatchesPil) {
  TempDir dir;
  writeTestImages("decode " + dir.path());
  const Image rgb = decodeImage(dir.file("rgb.png"));
  EXPECT_EQ(maxDifference(toChannels(rgb, 1), readReference(dir.file("rgb.png.as_gray.ref"))), 0);
  const Image gray = positions(2, 3, 1);
  const Image spread = toChannels(gray, 3);
  ASSERT_EQ(spread.channels, 3);
  for (size_t p = 0; p < gray.pixels.size(); ++p)
    for (size_t c = 0; c < 3; ++c) EXPECT_EQ(spread.pixels[3 * p + c], gray.pixels[p]);
}

TEST(ImageTransform, DrawsReproduceFromTheSeed) {
  // Pinned: mt19937_64 and boundedDraw are the same everywhere, so these are too.
  const AugmentDraw d = drawAugmentation(42, true, true, 4), e = drawAugmentation(43, true, true, 4);
  EXPECT_EQ(std::make_tuple(d.top, d.left, d.flip), std::make_tuple(int64_t{4}, int64_t{8}, false));
  EXPECT_EQ(std::make_tuple(e.top, e.left, e.flip), std::make_tuple(int64_t{3}, int64_t{5}, true));
  std::set<std::tuple<int64_t, int64_t, bool>> seen;
  int flips = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const AugmentDraw a = drawAugmentation(seed, true, true, 4), b = drawAugmentation(seed, true, true, 4);
    EXPECT_EQ(std::make_tuple(a.top, a.left, a.flip), std::make_tuple(b.top, b.left, b.flip));
    EXPECT_TRUE(a.top >= 0 && a.top <= 8 && a.left >= 0 && a.left <= 8);
    seen.insert({a.top, a.left, a.flip});
    flips += a.flip;
    // The flip does not depend on whether the crop is on; crop off is the centre, flip off never flips.
    const AugmentDraw flipOnly = drawAugmentation(seed, false, true, 4);
    EXPECT_EQ(flipOnly.flip, a.flip);
    EXPECT_EQ(std::make_tuple(flipOnly.top, flipOnly.left), std::make_tuple(int64_t{4}, int64_t{4}));
    EXPECT_FALSE(drawAugmentation(seed, true, false, 4).flip);
  }
  EXPECT_GT(seen.size(), 100u);  // different seeds differ (162 outcomes)
  EXPECT_GT(flips, 70);
  EXPECT_LT(flips, 130);
}

TEST(ImageTransform, CropOfThePaddedImageThenFlip) {
  const Image image = positions(4, 4, 2);
  const std::vector<double> mean{0, 0}, std{1.0 / 255, 1.0 / 255};  // output = pixel value
  std::vector<float> out(2 * 4 * 4);
  // Padding 2, crop at top 1, left 3: output (y, x) reads image (y - 1, x + 1), zero outside; flipped: x -> 3 - x.
  writeNormalized(image, AugmentDraw{1, 3, true}, 2, mean, std, out.data());
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t y = 0; y < 4; ++y)
      for (int64_t x = 0; x < 4; ++x) {
        const int64_t sy = y - 1, sx = (3 - x) + 1;
        const float want = sy >= 0 && sx < 4 ? static_cast<float>(10 * sy + sx + 100 * c) : 0.0f;
        EXPECT_NEAR(out[(c * 4 + y) * 4 + x], want, 1e-3) << c << " " << y << " " << x;
      }
  // No augmentation: the image itself, normalised per channel.
  writeNormalized(image, AugmentDraw{}, 0, {0.5, 0.25}, {0.5, 2.0}, out.data());
  EXPECT_FLOAT_EQ(out[0], (0 / 255.0f - 0.5f) / 0.5f);
  EXPECT_FLOAT_EQ(out[16 + 5], (111 / 255.0f - 0.25f) / 2.0f);
}

TEST(ImageTransform, SameSeedSamePixelsDifferentSeedsDiffer) {
  const Image image = positions(8, 8, 3);
  const std::vector<double> mean{0.1, 0.2, 0.3}, std{0.3, 0.2, 0.1};
  auto render = [&](uint64_t seed) {
    std::vector<float> out(3 * 8 * 8);
    writeNormalized(image, drawAugmentation(seed, true, true, 4), 4, mean, std, out.data());
    return out;
  };
  EXPECT_EQ(render(7), render(7));
  int distinct = 0;
  for (uint64_t seed = 8; seed < 18; ++seed) distinct += render(seed) != render(7);
  EXPECT_GE(distinct, 9);
}

}  // namespace
}  // namespace balancenet::data
