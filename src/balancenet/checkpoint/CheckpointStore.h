// CheckpointStore: a directory of checkpoints, step-00000100.ckpt, each written atomically, the newest K
// kept, with manifest.json (newest first) for people and tools. The files themselves are the truth: a
// crash between a checkpoint and its manifest loses nothing, and reading never trusts the manifest.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "balancenet/checkpoint/CheckpointFile.h"

namespace balancenet::checkpoint {

constexpr int kDefaultKeep = 3;

struct StoredCheckpoint {
  std::string path;
  Checkpoint checkpoint;
};

class CheckpointStore {
 public:
  using Warn = std::function<void(const std::string&)>;

  // Nothing touches the directory until the first write.
  CheckpointStore(std::string dir, int keep = kDefaultKeep);

  // Writes the checkpoint of `c.step`, then removes all but the newest `keep` up to it (never the one just
  // written) and the damaged ones newer than it (left from before a resume), then rewrites the manifest.
  // Returns the path written. Throws RuntimeFailure when the file cannot be written.
  std::string write(const Checkpoint& c);

  // The newest checkpoint that decodes intact; each newer one that does not is reported to `warn` with
  // the reason. Empty when the directory holds no intact checkpoint.
  std::optional<StoredCheckpoint> newestGood(const Warn& warn) const;

  // Checkpoint files present (intact or not), newest first.
  std::vector<std::string> files() const;
  static std::string fileName(int64_t step);

  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  int keep_;
};

}  // namespace balancenet::checkpoint
