// CheckpointFlags: --checkpoint-dir, --checkpoint-every, --keep-checkpoints, --resume, declared and checked once so
// train and federate refuse them in the same words.
#pragma once

namespace CLI {
class App;
}
namespace balancenet::checkpoint {
struct CheckpointOptions;
}

namespace balancenet::cli {

// Declares the group on `app`, into `options`.
void addCheckpointFlags(CLI::App& app, checkpoint::CheckpointOptions& options);

// The values and --resume without a directory: UsageError naming the flag. (What they cannot work with is the
// command's own check.)
void validateCheckpointFlags(const checkpoint::CheckpointOptions& options);

}  // namespace balancenet::cli
