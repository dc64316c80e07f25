// IdxSplit: finding a split's files (plain before .gz) and checking that its counts agree.
#include "balancenet/data/IdxSplit.h"

#include <filesystem>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/data/DataOptions.h"

namespace balancenet::data {

namespace {

// Plain first: if someone unpacked the files, reading them skips decompression.
std::string findPlainOrGz(const std::string& dir, const std::string& base, const std::string& what) {
  namespace fs = std::filesystem;
  for (const char* suffix : {"", ".gz"}) {
    fs::path candidate = fs::path(dir) / (base + suffix);
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec)) return candidate.string();
  }
  throw UsageError(fmt::format("{}: no {}(.gz) found", what, base));
}

}  // namespace

IdxSplit readIdxSplit(const std::string& dir, bool train, const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw UsageError(fmt::format("{}: no such directory{}", what,
                                 dir == kDefaultDataDir ? " (install the Debian package dataset-fashion-mnist)" : ""));
  const std::string prefix = train ? "train" : "t10k";
  IdxSplit s;
  s.imagePath = findPlainOrGz(dir, prefix + "-images-idx3-ubyte", what);
  s.labelPath = findPlainOrGz(dir, prefix + "-labels-idx1-ubyte", what);
  s.images = readIdx(s.imagePath, 3);
  s.labels = readIdx(s.labelPath, 1);
  if (s.labels.dims[0] != s.images.dims[0])
    throw UsageError(fmt::format("{}: {} has {} images but {} has {} labels", what,
                                 fs::path(s.imagePath).filename().string(), s.images.dims[0],
                                 fs::path(s.labelPath).filename().string(), s.labels.dims[0]));
  return s;
}

}  // namespace balancenet::data
