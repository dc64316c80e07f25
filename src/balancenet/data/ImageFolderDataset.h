// ImageFolderDataset: imagefolder:DIR, JPEG and PNG files in class folders, read from disk on demand.
#pragma once
#include <cstdint>
#include <string>

#include "balancenet/data/DataOptions.h"
#include "balancenet/data/Dataset.h"

namespace balancenet::data {

inline constexpr int64_t kDefaultImageSize = 32;             // options.imageSize 0
inline constexpr int64_t kNormalizationSampleImages = 1000;  // training images the statistics are computed over

// Opens DIR (layout: data/ImageFolderLayout.h). Every file's header is read now, on options.loaderThreads
// threads: one that does not parse is a UsageError naming it. Channels: 3 if any image of train or val is
// colour (RGB, RGBA, palette), else 1; the others are converted. Samples are {C, S, S} float32 normalised
// with the statistics of resolveNormalization (computed over up to kNormalizationSampleImages evenly spaced
// training images at S x S), targets the class index. Images are decoded when a batch asks for them, on
// options.loaderThreads threads; trainingBatch crops and flips as options.augmentCrop/augmentFlip say,
// from each Draw's augmentSeed; batch() never augments. A file that fails to decode then is replaced by
// the next image of its class that decodes (the same on every run and machine), counted in
// skippedSamples() and logged once.
DatasetPair openImageFolder(const std::string& dir, const DataOptions& options);

}  // namespace balancenet::data
