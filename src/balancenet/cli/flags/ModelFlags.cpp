// The model flags: declared alike for train, federate and federate serve, checked against the model zoo.
#include "balancenet/cli/flags/ModelFlags.h"

#include <algorithm>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "balancenet/cli/flags/DataFlags.h"
#include "balancenet/core/Error.h"
#include "balancenet/job/JobConfig.h"
#include "balancenet/models/ScriptedNetwork.h"

namespace balancenet::cli {
using job::JobConfig;

void addModelFlags(CLI::App& app, JobConfig& c) {
  app.add_option("--model", c.model.name,
                 "cnn, mlp, alexnet, vgg16, resnet18, resnet50, gpt (see 'balancenet models'), or a TorchScript file "
                 "(*.pt, from torch.jit.script/trace) mapping the data's samples (e.g. [N,1,28,28] images, [N,T] "
                 "int64 tokens) to [N,classes] logits ([N,T,vocabulary] for tokens)")
      ->capture_default_str();
  app.add_option("--width", c.model.width, "Scale channels and hidden sizes (big models on few cores)")
      ->capture_default_str();
  app.add_option("--dropout", c.model.dropout, "Dropout probability; <0 keeps the model's default, 0 disables");
  app.add_flag("--sync-bn", c.syncBatchNorm,
               "BatchNorm statistics over the whole global batch (exact for unequal splits)");
  app.add_option("--layers", c.model.layers, "gpt: transformer blocks")->capture_default_str();
  app.add_option("--heads", c.model.heads, "gpt: attention heads (--embed a multiple of it)")->capture_default_str();
  app.add_option("--embed", c.model.embed, "gpt: embedding width")->capture_default_str();
  addDataFlags(app, c);
}

// --model, --width, --dropout, and the data's flags.
void validateModel(const JobConfig& c) {
  auto names = models::modelNames();
  if (models::isScriptedModelPath(c.model.name)) {
    require(!c.syncBatchNorm, "--sync-bn needs a zoo model: a TorchScript model's BatchNorm layers cannot be replaced");
    // A bad file is one error before launch (LaunchChecks), where the data's samples probe it.
  } else if (std::find(names.begin(), names.end(), c.model.name) == names.end()) {
    throw UsageError(fmt::format("unknown --model '{}'; choose one of: {} (or a TorchScript file, *.pt)", c.model.name,
                                 fmt::join(names, ", ")));
  }
  require(c.model.width > 0, fmt::format("--width must be positive, got {}", c.model.width));
  require(c.model.dropout < 1, fmt::format("--dropout must be below 1, got {}", c.model.dropout));
}

}  // namespace balancenet::cli
