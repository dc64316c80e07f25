// DataOptions: which data to open and how (the --data flag and the flags that shape its samples).
#pragma once
#include <cstdint>
#include <string>
#include <vector>
#include "balancenet/core/FieldList.h"

namespace balancenet::data {

// Where Debian's dataset-fashion-mnist package installs the four .gz files: the embedded default.
inline constexpr const char* kDefaultDataDir = "/usr/share/datasets/fashion-mnist";

struct DataOptions {
  // FORMAT:PATH (idx:DIR, imagefolder:DIR, cifar10:DIR, npy:X.npy,Y.npy, tokens:FILE, text:FILE).
  std::string source = std::string("idx:") + kDefaultDataDir;
  // Per-channel mean and std of the [0,1]-scaled pixels (one value: every channel). Empty: computed from
  // the training set once and cached in cacheDir (or not cached when cacheDir is empty).
  std::vector<double> normalizeMean, normalizeStd;
  std::string cacheDir;      // defaultCacheDir() from the command line
  int64_t imageSize = 0;     // imagefolder: every image resized to imageSize x imageSize (0: 32)
  bool augmentCrop = false;  // random crop of the padded image (padding cropPadding), training only
  bool augmentFlip = false;  // random horizontal flip, training only
  int64_t cropPadding = 4;
  double valFraction =
      0.1;              // held-out share where a source has no test split (imagefolder without val/, npy, tokens, text)
  int64_t context = 0;  // tokens/text: window length T (required there)
  int loaderThreads = 0;           // decoding threads (imagefolder); 0: the worker's --threads
  bool regressionTargets = false;  // npy: float targets (--loss mse) instead of int64 classes

  // The fields a launcher sends its workers (core/FieldList.h): every one.
  BALANCENET_FIELDS(source, normalizeMean, normalizeStd, cacheDir, imageSize, augmentCrop, augmentFlip, cropPadding,
                    valFraction, context, loaderThreads, regressionTargets);
};
BALANCENET_CHECK_FIELDS(DataOptions);

// $XDG_CACHE_HOME/balancenet, else $HOME/.cache/balancenet, else empty (no cache): statistics computed
// once per dataset, not once per run.
std::string defaultCacheDir();

}  // namespace balancenet::data
