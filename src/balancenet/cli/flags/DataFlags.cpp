// DataFlags: declaring and parsing the data flags.
#include "balancenet/cli/flags/DataFlags.h"

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/ParseNumber.h"
#include "balancenet/data/OpenDataset.h"

namespace balancenet::cli {

namespace {

std::vector<std::string> splitCommas(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

}  // namespace

void parseNormalize(const std::string& text, data::DataOptions& options) {
  const auto parts = splitCommas(text);
  if (parts.size() % 2 != 0)
    throw UsageError(
        fmt::format("--normalize '{}': give the means then the stds (MEAN,STD or M1,M2,M3,S1,S2,S3)", text));
  std::vector<double> values;
  for (const auto& p : parts) {
    const auto v = parseFiniteNumber(p);
    if (!v) throw UsageError(fmt::format("--normalize '{}': '{}' is not a number", text, p));
    values.push_back(*v);
  }
  const auto half = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  options.normalizeMean.assign(values.begin(), half);
  options.normalizeStd.assign(half, values.end());
  for (double s : options.normalizeStd)
    if (!(s > 0)) throw UsageError(fmt::format("--normalize '{}': a std must be positive", text));
}

void parseAugment(const std::string& text, data::DataOptions& options) {
  options.augmentCrop = options.augmentFlip = false;
  if (text == "none") return;
  for (const auto& p : splitCommas(text)) {
    if (p == "crop")
      options.augmentCrop = true;
    else if (p == "flip")
      options.augmentFlip = true;
    else
      throw UsageError(fmt::format("--augment '{}': a comma list of crop and flip, or none", text));
  }
}

void addDataFlags(CLI::App& app, job::JobConfig& c) {
  auto& d = c.data;
  auto* source = app.add_option("--data", d.source,
                                fmt::format("FORMAT:PATH, the training data: {} (see docs/data.md). A directory "
                                            "alone is idx",
                                            fmt::join(data::formatNames(), ", ")))
                     ->capture_default_str();
  // Both given, CLI11 would apply --data-dir last (declaration order, not the command line's): refused.
  app.add_option_function<std::string>(
         "--data-dir", [&d](const std::string& dir) { d.source = "idx:" + dir; },
         "An MNIST-format (IDX) directory: the same as --data idx:DIR")
      ->type_name("DIR")
      ->excludes(source);
  app.add_option_function<std::string>(
         "--normalize", [&d](const std::string& v) { parseNormalize(v, d); },
         "Per-channel MEAN,...,STD,... of the [0,1] pixels (default: computed from the training images once, cached "
         "in the run's data-cache folder)")
      ->type_name("LIST");
  app.add_option("--image-size", d.imageSize, "imagefolder: resize every image to SIZE x SIZE (default 32)");
  app.add_option_function<std::string>(
         "--augment", [&d](const std::string& v) { parseAugment(v, d); },
         "Training augmentation: crop (random crop of the image padded by --crop-padding), flip (random horizontal "
         "flip), crop,flip or none; drawn per (epoch, sample), the same whatever the split")
      ->type_name("LIST");
  app.add_option("--crop-padding", d.cropPadding, "Padding of --augment crop, in pixels")->capture_default_str();
  app.add_option("--val-fraction", d.valFraction,
                 "Held-out share where the data has no test split (imagefolder without val/, npy, tokens, text)")
      ->capture_default_str();
  app.add_option("--context", d.context, "tokens/text: tokens per sample (the window; targets are the next tokens)");
  app.add_option("--loader-threads", d.loaderThreads,
                 "Threads decoding images for each worker (default: its --threads)");
  app.add_option_function<std::string>(
         "--loss",
         [&c](const std::string& v) {
           c.objective.loss = objective::parseLossKind(v);
           c.data.regressionTargets = c.objective.loss == objective::LossKind::Mse;
         },
         "auto (cross-entropy for classes and tokens, mse for float targets), cross-entropy or mse")
      ->type_name("LOSS");
  app.add_option("--label-smoothing", c.objective.labelSmoothing, "Cross-entropy label smoothing in [0, 1)")
      ->capture_default_str();
}

}  // namespace balancenet::cli
