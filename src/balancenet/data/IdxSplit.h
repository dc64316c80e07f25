// IdxSplit: the image and label files of one split of an MNIST-layout directory, found and read.
#pragma once
#include <string>

#include "balancenet/data/IdxFile.h"

namespace balancenet::data {

struct IdxSplit {
  std::string imagePath, labelPath;  // the files read (plain or .gz)
  IdxArray images;                   // dims {N, H, W}
  IdxArray labels;                   // dims {N}, the same N
};

// Reads <prefix>-images-idx3-ubyte and <prefix>-labels-idx1-ubyte from `dir`, each plain or with .gz
// (prefix "train" or "t10k"). `what` starts the messages about the directory ("--data-dir DIR",
// "idx:DIR"). Throws UsageError with one line for a missing directory or file, a malformed file
// (readIdx) or image and label counts that differ. Label values are the caller's to check.
IdxSplit readIdxSplit(const std::string& dir, bool train, const std::string& what);

}  // namespace balancenet::data
