// ImageFolderLayout: class folders, their image files in torchvision's order, and the held-out cut.
#include "balancenet/data/ImageFolderLayout.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/PortableRandom.h"

namespace balancenet::data {

namespace {

namespace fs = std::filesystem;

constexpr uint64_t kHeldOutSeed = 0x76616c;  // "val": the held-out cut is a property of the folder, not the run

bool isDirectory(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

bool isImageName(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png";
}

// Byte order of the names (UTF-8 byte order is code point order: Python's sorted()).
std::vector<std::string> classFolders(const fs::path& root) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
    if (isDirectory(it->path())) names.push_back(it->path().filename().string());
  if (ec) throw UsageError(fmt::format("{}: cannot list the folder ({})", root.string(), ec.message()));
  std::sort(names.begin(), names.end());
  if (names.empty())
    throw UsageError(fmt::format("{}: no class folders (imagefolder expects one sub-folder per class)", root.string()));
  return names;
}

std::vector<std::string> imagesIn(const fs::path& classDir) {
  std::vector<std::pair<std::string, std::string>> found;  // (folder, name): torchvision's sorted(os.walk) order
  std::error_code ec;
  fs::recursive_directory_iterator it(classDir, fs::directory_options::follow_directory_symlink, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::error_code fileEc;
    if (it->is_regular_file(fileEc) && isImageName(it->path()))
      found.emplace_back(it->path().parent_path().string(), it->path().filename().string());
  }
  if (ec) throw UsageError(fmt::format("{}: cannot list the folder ({})", classDir.string(), ec.message()));
  if (found.empty())
    throw UsageError(fmt::format("{}: empty class folder (no .jpg, .jpeg or .png file)", classDir.string()));
  std::sort(found.begin(), found.end());
  std::vector<std::string> paths;
  for (const auto& [folder, name] : found) paths.push_back((fs::path(folder) / name).string());
  return paths;
}

std::vector<ImageFile> filesOf(const fs::path& root, const std::vector<std::string>& classes) {
  std::vector<ImageFile> files;
  for (size_t c = 0; c < classes.size(); ++c)
    for (std::string& p : imagesIn(root / classes[c])) files.push_back({std::move(p), static_cast<int64_t>(c)});
  return files;
}

// Moves round(n * fraction) files of each class (at most n - 1) from train to val, both kept in order.
// filesOf lists the classes one after another, so each class is one run of train.
void holdOut(ImageFolderLayout& layout, double fraction) {
  std::vector<ImageFile> train;
  for (size_t begin = 0, end = 0; begin < layout.train.size(); begin = end) {
    const int64_t label = layout.train[begin].label;
    while (end < layout.train.size() && layout.train[end].label == label) ++end;
    const auto n = static_cast<int64_t>(end - begin);
    const int64_t k = std::min(n - 1, static_cast<int64_t>(std::llround(static_cast<double>(n) * fraction)));
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
    std::mt19937_64 gen = seededGenerator(kHeldOutSeed, static_cast<uint64_t>(label));
    portableShuffle(order, gen);
    std::vector<bool> heldOut(static_cast<size_t>(n), false);
    for (int64_t i = 0; i < k; ++i) heldOut[static_cast<size_t>(order[static_cast<size_t>(i)])] = true;
    for (int64_t i = 0; i < n; ++i)
      (heldOut[static_cast<size_t>(i)] ? layout.val : train).push_back(layout.train[begin + static_cast<size_t>(i)]);
  }
  layout.train = std::move(train);
}

}  // namespace

ImageFolderLayout scanImageFolder(const std::string& dir, double valFraction) {
  const fs::path root(dir);
  if (!isDirectory(root)) throw UsageError(fmt::format("imagefolder:{}: no such directory", dir));
  ImageFolderLayout layout;
  const bool hasTrain = isDirectory(root / "train"), hasVal = isDirectory(root / "val");
  if (hasVal && !hasTrain) throw UsageError(fmt::format("{}: has val/ but no train/ folder", dir));
  const fs::path trainRoot = hasTrain ? root / "train" : root;
  layout.classes = classFolders(trainRoot);
  layout.train = filesOf(trainRoot, layout.classes);
  if (hasVal) {
    const std::vector<std::string> valClasses = classFolders(root / "val");
    if (valClasses != layout.classes) {
      const auto missing =
          std::mismatch(layout.classes.begin(), layout.classes.end(), valClasses.begin(), valClasses.end());
      throw UsageError(fmt::format("{}: val/ has classes other than train/'s ({} in train/, {} in val/)", dir,
                                   missing.first == layout.classes.end() ? "-" : *missing.first,
                                   missing.second == valClasses.end() ? "-" : *missing.second));
    }
    layout.val = filesOf(root / "val", layout.classes);
    return layout;
  }
  if (!(valFraction >= 0 && valFraction < 1))
    throw UsageError(fmt::format("--val-fraction {}: must be at least 0 and below 1", valFraction));
  holdOut(layout, valFraction);
  return layout;
}

}  // namespace balancenet::data
