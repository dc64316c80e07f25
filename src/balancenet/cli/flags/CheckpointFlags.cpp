// The checkpoint flags: declared alike for train, federate and federate serve, and checked once.
#include "balancenet/cli/flags/CheckpointFlags.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "balancenet/checkpoint/CheckpointOptions.h"
#include "balancenet/core/Error.h"

namespace balancenet::cli {
using checkpoint::CheckpointOptions;

void addCheckpointFlags(CLI::App& app, CheckpointOptions& o) {
  app.add_option("--checkpoint-dir", o.dir,
                 "Save checkpoints here (model, optimiser, data position, RNG, split; atomic, checksummed): every "
                 "--checkpoint-every steps and after the last step. Without --resume the directory must hold none");
  app.add_option("--checkpoint-every", o.every, "Steps between checkpoints (with --checkpoint-dir)")
      ->capture_default_str();
  app.add_option("--keep-checkpoints", o.keep, "Newest checkpoints kept in --checkpoint-dir; older ones are removed")
      ->capture_default_str();
  app.add_flag("--resume", o.resume,
               "Continue from the newest intact checkpoint in --checkpoint-dir (a damaged one is skipped with a "
               "warning); --steps stays the total, so the remaining steps are trained");
}

// (--checkpoint-every and --keep-checkpoints alone are harmless defaults, as --print-config writes them.)
void validateCheckpointFlags(const CheckpointOptions& o) {
  if (o.dir.empty()) return require(!o.resume, "--resume needs --checkpoint-dir");
  require(o.every >= 1, fmt::format("--checkpoint-every must be at least 1, got {}", o.every));
  require(o.keep >= 1, fmt::format("--keep-checkpoints must be at least 1, got {}", o.keep));
}

}  // namespace balancenet::cli
