// ImageTransform: separable resize (bilinear up, area down), the portable crop/flip draw, normalisation.
#include "balancenet/data/ImageTransform.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "balancenet/core/Error.h"
#include "balancenet/core/PortableRandom.h"

namespace balancenet::data {

namespace {

// Salt of the augmentation generator, so that it never shares a stream with another use of the same seed.
constexpr uint64_t kAugmentSalt = 0x696d616765ULL;  // "image"

// For each output pixel of one axis, the input pixels it reads and their weights (summing to 1).
struct AxisTaps {
  std::vector<int64_t> first;  // per output: offset of its taps in index/weight
  std::vector<int64_t> index;  // input pixel
  std::vector<float> weight;
};

AxisTaps axisTaps(int64_t in, int64_t out) {
  AxisTaps taps;
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  for (int64_t o = 0; o < out; ++o) {
    taps.first.push_back(static_cast<int64_t>(taps.index.size()));
    if (out >= in) {
      // torch's area_pixel_compute_source_index (align_corners=False): negative sources clamp to 0.
      const double source = std::max(0.0, (static_cast<double>(o) + 0.5) * scale - 0.5);
      const int64_t i0 = std::min(static_cast<int64_t>(source), in - 1);
      const int64_t i1 = std::min(i0 + 1, in - 1);
      const double lambda = source - static_cast<double>(i0);
      taps.index.push_back(i0);
      taps.weight.push_back(static_cast<float>(1.0 - lambda));
      taps.index.push_back(i1);
      taps.weight.push_back(static_cast<float>(lambda));
    } else {
      // adaptive average pooling's cells: [floor(o*in/out), ceil((o+1)*in/out)).
      const int64_t start = o * in / out, end = ((o + 1) * in + out - 1) / out;
      for (int64_t i = start; i < end; ++i) {
        taps.index.push_back(i);
        taps.weight.push_back(1.0f / static_cast<float>(end - start));
      }
    }
  }
  taps.first.push_back(static_cast<int64_t>(taps.index.size()));
  return taps;
}

}  // namespace

Image toChannels(const Image& image, int64_t channels) {
  if (image.channels == channels) return image;
  Image out{image.height, image.width, channels, {}};
  const size_t pixels = static_cast<size_t>(image.height * image.width);
  out.pixels.resize(pixels * static_cast<size_t>(channels));
  if (image.channels == 1 && channels == 3) {
    for (size_t p = 0; p < pixels; ++p) std::fill_n(&out.pixels[3 * p], 3, image.pixels[p]);
  } else if (image.channels == 3 && channels == 1) {
    for (size_t p = 0; p < pixels; ++p) {
      const uint8_t* rgb = &image.pixels[3 * p];
      out.pixels[p] = static_cast<uint8_t>((19595u * rgb[0] + 38470u * rgb[1] + 7471u * rgb[2] + 0x8000u) >> 16);
    }
  } else {
    throw InternalError("toChannels: only 1 <-> 3 channels");
  }
  return out;
}

Image resizeImage(const Image& image, int64_t size) {
  if (image.height == size && image.width == size) return image;
  const int64_t c = image.channels;
  const AxisTaps across = axisTaps(image.width, size), down = axisTaps(image.height, size);
  // Rows first (image.height x size), then columns: the same sums as the 2-D kernel, fewer operations.
  std::vector<float> rows(static_cast<size_t>(image.height * size * c));
  for (int64_t y = 0; y < image.height; ++y) {
    const uint8_t* in = &image.pixels[static_cast<size_t>(y * image.width * c)];
    float* row = &rows[static_cast<size_t>(y * size * c)];
    for (int64_t x = 0; x < size; ++x)
      for (int64_t k = across.first[x]; k < across.first[x + 1]; ++k)
        for (int64_t ch = 0; ch < c; ++ch) row[x * c + ch] += across.weight[k] * in[across.index[k] * c + ch];
  }
  Image out{size, size, c, std::vector<uint8_t>(static_cast<size_t>(size * size * c))};
  std::vector<float> sum(static_cast<size_t>(size * c));
  for (int64_t y = 0; y < size; ++y) {
    std::fill(sum.begin(), sum.end(), 0.0f);
    for (int64_t k = down.first[y]; k < down.first[y + 1]; ++k) {
      const float* row = &rows[static_cast<size_t>(down.index[k] * size * c)];
      for (int64_t i = 0; i < size * c; ++i) sum[i] += down.weight[k] * row[i];
    }
    for (int64_t i = 0; i < size * c; ++i)
      out.pixels[static_cast<size_t>(y * size * c + i)] =
          static_cast<uint8_t>(std::clamp(std::lround(sum[i]), 0L, 255L));
  }
  return out;
}

AugmentDraw drawAugmentation(uint64_t seed, bool crop, bool flip, int64_t padding) {
  std::mt19937_64 gen = seededGenerator(seed, kAugmentSalt);
  const auto positions = static_cast<uint64_t>(2 * padding + 1);
  AugmentDraw draw;
  draw.top = static_cast<int64_t>(boundedDraw(gen, positions));
  draw.left = static_cast<int64_t>(boundedDraw(gen, positions));
  draw.flip = flip && boundedDraw(gen, 2) == 1;
  if (!crop) draw.top = draw.left = padding;
  return draw;
}

void writeNormalized(const Image& image, const AugmentDraw& draw, int64_t padding, const std::vector<double>& mean,
                     const std::vector<double>& std, float* out) {
  const int64_t c = image.channels, h = image.height, w = image.width;
  if (static_cast<int64_t>(mean.size()) != c || std.size() != mean.size())
    throw InternalError("writeNormalized: statistics for another channel count");
  for (int64_t ch = 0; ch < c; ++ch) {
    // The same float operations as normalizeImages (x / 255 - mean) / std, looked up per byte value.
    std::array<float, 256> value;
    for (int v = 0; v < 256; ++v)
      value[v] = (static_cast<float>(v) / 255.0f - static_cast<float>(mean[ch])) / static_cast<float>(std[ch]);
    float* plane = out + ch * h * w;
    for (int64_t y = 0; y < h; ++y) {
      const int64_t sy = y + draw.top - padding;
      for (int64_t x = 0; x < w; ++x) {
        const int64_t sx = (draw.flip ? w - 1 - x : x) + draw.left - padding;
        const bool inside = sy >= 0 && sy < h && sx >= 0 && sx < w;
        plane[y * w + x] = value[inside ? image.pixels[static_cast<size_t>((sy * w + sx) * c + ch)] : 0];
      }
    }
  }
}

}  // namespace balancenet::data
