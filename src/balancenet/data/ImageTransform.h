// ImageTransform: the pure per-image steps of imagefolder: channel conversion, resize to S x S, the seeded
// crop and flip, and the normalised CHW floats the models take.
#pragma once
#include <cstdint>
#include <vector>

#include "balancenet/data/ImageDecode.h"

namespace balancenet::data {

// Gray to RGB by repeating the channel; RGB to gray with PIL's convert("L") weights and rounding
// (ITU-R 601-2: (19595 R + 38470 G + 7471 B + 2^15) >> 16).
Image toChannels(const Image& image, int64_t channels);

// S x S. Enlarging (or keeping) an axis: bilinear with half-pixel centres, torch's interpolate(bilinear,
// align_corners=False), which is torchvision's Resize((S,S)) on tensors without antialias. Shrinking an
// axis: area, torch's interpolate(mode="area") (each output pixel the mean of the input pixels its cell
// overlaps): bilinear from a much larger image reads 4 of its pixels per output pixel and aliases, the
// area mean reads them all. Each axis chooses on its own; results are rounded to uint8.
Image resizeImage(const Image& image, int64_t size);

// Where the random crop of the zero-padded image starts and whether the result is mirrored.
struct AugmentDraw {
  int64_t top = 0, left = 0;  // in the padded image, 0..2*padding; padding, padding is the uncropped image
  bool flip = false;
};

// torchvision's RandomCrop(S, padding=P) then RandomHorizontalFlip(0.5), drawn from seededGenerator(seed,
// salt) with boundedDraw: top, left in [0, 2P] and then the flip, always drawn in that order so that a
// seed flips the same samples with or without the crop. Without crop, top = left = P; without flip, none.
AugmentDraw drawAugmentation(uint64_t seed, bool crop, bool flip, int64_t padding);

// Writes the image (already S x S with `mean.size()` channels) as CHW floats (x / 255 - mean[c]) / std[c]
// into out[C*S*S]: cropped at `draw` from the image padded with `padding` zero pixels, then mirrored if
// draw.flip. A default AugmentDraw with padding 0 writes the image unchanged.
void writeNormalized(const Image& image, const AugmentDraw& draw, int64_t padding, const std::vector<double>& mean,
                     const std::vector<double>& std, float* out);

}  // namespace balancenet::data
