// ModelsCommand: the zoo table and the per-block table that pipeline partitions are chosen from.
#include "balancenet/cli/ModelsCommand.h"

#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "balancenet/models/ModelZoo.h"

namespace balancenet::cli {
namespace {

models::ModelOptions modelOptions(const std::string& name, double width) {
  models::ModelOptions o;
  o.name = name;
  o.width = width;
  models::assumeDefaultSamples(o);
  return o;
}

int printZoo(double width) {
  std::cout << fmt::format("{:<10} {:>14} {:>16} {:>16}  {}\n", "model", "parameters", "MFLOPs/sample",
                           "train MB/sample", "batch norm");
  for (const auto& name : models::modelNames()) {
    auto info = models::buildModel(modelOptions(name, width)).info;
    std::cout << fmt::format("{:<10} {:>14} {:>16.2f} {:>16.2f}  {}\n", name, info.parameters,
                             info.flopsPerSample / 1e6, info.memoryPerSampleBytes / 1e6,
                             info.hasBatchNorm ? "yes" : "no");
  }
  std::cout << fmt::format(
      "(forward FLOPs per 28x28x1 sample at --width {}; gpt's per window of {} tokens of a 256-symbol text, at its "
      "--layers/--heads/--embed defaults, which --width does not scale; training costs about 3x)\n",
      width, models::kDefaultContext);
  return 0;
}

// "act KB/sample" is the block's share of the model's "train MB/sample": activations kept for backward
// and their gradients. The output shape is what a pipeline cut after the block sends per sample.
int printBlocks(const std::string& name, double width) {
  const auto built = models::buildModel(modelOptions(name, width));
  const auto blocks = built.net->blocks();
  std::cout << fmt::format("{:>5}  {:<10} {:<9} {:>12} {:>14}  {:<14} {:>14}\n", "index", "name", "kind", "parameters",
                           "MFLOPs/sample", "output shape", "act KB/sample");
  for (size_t i = 0; i < blocks.size(); ++i) {
    const auto& b = blocks[i];
    std::cout << fmt::format("{:>5}  {:<10} {:<9} {:>12} {:>14.3f}  {:<14} {:>14.1f}\n", i, b.name, b.kind,
                             b.parameters, b.flopsPerSample / 1e6, fmt::format("{}", fmt::join(b.outputShape, "x")),
                             b.memoryPerSampleBytes / 1e3);
  }
  std::cout << fmt::format("{} block{} in {} at --width {}\n", blocks.size(), blocks.size() == 1 ? "" : "s", name,
                           width);
  return 0;
}

}  // namespace

void addModelsFlags(CLI::App& app, ModelsOptions& options) {
  app.add_option("--blocks", options.blocksOf,
                 "List MODEL's blocks (what pipeline stages are cut from): a zoo name or a TorchScript file")
      ->option_text("MODEL");
  app.add_option("--width", options.width, "Scale channels and hidden sizes, as in train")->capture_default_str();
}

int runModels(const ModelsOptions& options) {
  return options.blocksOf.empty() ? printZoo(options.width) : printBlocks(options.blocksOf, options.width);
}

}  // namespace balancenet::cli
