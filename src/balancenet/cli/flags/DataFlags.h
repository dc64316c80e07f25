// DataFlags: --data and the flags that shape its samples, loss and metrics (train and federate share them).
#pragma once
#include <CLI/CLI.hpp>

#include "balancenet/job/JobConfig.h"

namespace balancenet::cli {

// --data, --data-dir, --normalize, --image-size, --augment, --crop-padding, --val-fraction, --context,
// --loader-threads, --loss, --label-smoothing. Values are parsed as they are read: a bad one is a
// UsageError naming its flag.
void addDataFlags(CLI::App& app, job::JobConfig& config);

// "MEAN,...,STD,...": the first half means, the second half stds (2 numbers: every channel).
void parseNormalize(const std::string& text, data::DataOptions& options);
// "crop,flip", "crop", "flip" or "none".
void parseAugment(const std::string& text, data::DataOptions& options);

}  // namespace balancenet::cli
