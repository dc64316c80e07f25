#include "balancenet/checkpoint/CheckpointStore.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "balancenet/core/AtomicFile.h"

namespace balancenet::checkpoint {
namespace fs = std::filesystem;
namespace {

// Final names only: the atomic writer's temporary files ("<name>.tmp.<pid>") never match.
const std::regex kName(R"(step-(\d{8,})\.ckpt)");

std::string readWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CorruptCheckpoint("cannot be read");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

CheckpointStore::CheckpointStore(std::string dir, int keep) : dir_(std::move(dir)), keep_(keep) {
  if (keep_ < 1) throw UsageError(fmt::format("--keep-checkpoints must be at least 1, got {}", keep_));
  std::error_code ec;
  if (fs::exists(dir_, ec) && !fs::is_directory(dir_, ec))
    throw UsageError(fmt::format("--checkpoint-dir {} exists and is not a directory", dir_));
}

std::string CheckpointStore::fileName(int64_t step) { return fmt::format("step-{:08d}.ckpt", step); }

std::vector<std::string> CheckpointStore::files() const {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    std::smatch m;
    const std::string name = it->path().filename().string();
    if (std::regex_match(name, m, kName)) found.emplace_back(std::stoll(m[1].str()), it->path().string());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> paths;
  for (auto& f : found) paths.push_back(std::move(f.second));
  return paths;
}

std::string CheckpointStore::write(const Checkpoint& c) {
  ensureDirectory(dir_);
  const std::string path = (fs::path(dir_) / fileName(c.step)).string();
  writeFileAtomically(path, encode(c));
  auto present = files();
  std::vector<std::string> kept;
  for (size_t i = 0; i < present.size(); ++i) {
    if (static_cast<int>(i) < keep_) {
      kept.push_back(present[i]);
    } else {
      std::error_code ec;
      fs::remove(present[i], ec);  // an old checkpoint that will not go is only disk space
    }
  }
  writeManifest(kept);
  return path;
}

void CheckpointStore::writeManifest(const std::vector<std::string>& kept) const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& path : kept) {
    std::error_code ec;
    const auto bytes = fs::file_size(path, ec);
    std::smatch m;
    const std::string name = fs::path(path).filename().string();
    std::regex_match(name, m, kName);
    list.push_back({{"file", name}, {"step", std::stoll(m[1].str())}, {"bytes", ec ? 0 : bytes}});
  }
  nlohmann::json manifest{{"format_version", kFormatVersion}, {"checkpoints", list}};
  writeFileAtomically((fs::path(dir_) / "manifest.json").string(), manifest.dump(2) + "\n");
}

std::optional<StoredCheckpoint> CheckpointStore::newestGood(const Warn& warn) const {
  for (const auto& path : files()) {
    try {
      return StoredCheckpoint{path, decode(readWhole(path))};
    } catch (const CorruptCheckpoint& e) {
      if (warn) warn(fmt::format("checkpoint {} is damaged ({}); trying the one before it", path, e.what()));
    }
  }
  return std::nullopt;
}

}  // namespace balancenet::checkpoint
