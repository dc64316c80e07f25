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

// A checkpoint file and the step its name says.
struct Entry {
  int64_t step;
  std::string path;
};

// The checkpoint files of `dir`, newest first.
std::vector<Entry> entries(const std::string& dir) {
  std::vector<Entry> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::smatch m;
    const std::string name = it->path().filename().string();
    if (std::regex_match(name, m, kName)) found.push_back({std::stoll(m[1].str()), it->path().string()});
  }
  std::sort(found.begin(), found.end(), [](const Entry& a, const Entry& b) { return a.step > b.step; });
  return found;
}

bool intact(const std::string& path) {
  try {
    decode(readWhole(path));
    return true;
  } catch (const CorruptCheckpoint&) {
    return false;
  }
}

// manifest.json: the kept checkpoints, newest first, for people and tools (reading never trusts it).
void writeManifest(const std::string& dir, const std::vector<Entry>& kept) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [step, path] : kept) {
    std::error_code ec;
    const auto bytes = fs::file_size(path, ec);
    list.push_back({{"file", fs::path(path).filename().string()}, {"step", step}, {"bytes", ec ? 0 : bytes}});
  }
  nlohmann::json manifest{{"format_version", kFormatVersion}, {"checkpoints", list}};
  writeFileAtomically((fs::path(dir) / "manifest.json").string(), manifest.dump(2) + "\n");
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
  std::vector<std::string> paths;
  for (auto& e : entries(dir_)) paths.push_back(std::move(e.path));
  return paths;
}

// Retention counts the checkpoint just written and the K - 1 newest before it, so it can never remove the one
// it has just written. A file newer than that one is left from before a resume: a run resumes from the
// newest intact checkpoint and a run without --resume refuses a directory that holds any, so such a file
// is one the resume went behind as damaged. It is removed (it would crowd out every new checkpoint and be
// warned about at every later resume). An intact newer one (a file put there by hand) is left alone and
// neither counted nor listed.
std::string CheckpointStore::write(const Checkpoint& c) {
  ensureDirectory(dir_);
  const std::string path = (fs::path(dir_) / fileName(c.step)).string();
  writeFileAtomically(path, encode(c));
  std::vector<Entry> kept;
  for (auto& e : entries(dir_)) {
    std::error_code ec;
    if (e.step > c.step) {
      if (!intact(e.path)) fs::remove(e.path, ec);
    } else if (static_cast<int>(kept.size()) < keep_) {
      kept.push_back(std::move(e));
    } else {
      fs::remove(e.path, ec);  // an old checkpoint that will not go is only disk space
    }
  }
  writeManifest(dir_, kept);
  return path;
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
