// OpenDataset: --data FORMAT:PATH parsed and dispatched through one table of formats.
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "balancenet/core/Error.h"
#include "balancenet/data/Cifar10Dataset.h"
#include "balancenet/data/IdxDataset.h"
#include "balancenet/data/ImageFolderDataset.h"
#include "balancenet/data/NpyDataset.h"
#include "balancenet/data/OpenDataset.h"
#include "balancenet/data/TokenDataset.h"

namespace balancenet::data {

namespace {

struct Format {
  const char* name;
  DatasetPair (*open)(const std::string& path, const DataOptions& options);
};

// In the order --help lists them.
constexpr Format kFormats[] = {
    {"idx", openIdx},       {"imagefolder", openImageFolder}, {"cifar10", openCifar10}, {"npy", openNpy},
    {"tokens", openTokens}, {"tokens32", openTokens32},       {"text", openText},
};

const Format* formatNamed(const std::string& name) {
  for (const Format& f : kFormats)
    if (name == f.name) return &f;
  return nullptr;
}

}  // namespace

std::vector<std::string> formatNames() {
  std::vector<std::string> names;
  for (const Format& f : kFormats) names.emplace_back(f.name);
  return names;
}

DatasetPair openDataset(const DataOptions& options) {
  const std::string& source = options.source;
  const size_t colon = source.find(':');
  if (colon != std::string::npos) {
    if (const Format* f = formatNamed(source.substr(0, colon))) {
      const std::string path = source.substr(colon + 1);
      if (path.empty()) throw UsageError(fmt::format("--data {}: no path after '{}:'", source, f->name));
      return f->open(path, options);
    }
  }
  // A bare directory is an IDX one: what --data-dir always named (even with a ':' in its name).
  std::error_code ec;
  if (std::filesystem::is_directory(source, ec)) return openIdx(source, options);
  if (colon != std::string::npos)
    throw UsageError(fmt::format("--data {}: unknown format '{}'; the formats are {}", source, source.substr(0, colon),
                                 fmt::join(formatNames(), ", ")));
  throw UsageError(fmt::format("--data {}: no such directory; give FORMAT:PATH with a format of {}", source,
                               fmt::join(formatNames(), ", ")));
}

}  // namespace balancenet::data
