// BatchSizing: what --global-batch asks for: a fixed B, B chosen during training (auto), or B by step (a ramp).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>
#include "balancenet/core/FieldList.h"

namespace balancenet::adaptive {

// `--global-batch auto`'s defaults: it starts at the fixed default B, 128, the batch the default learning rate
// is tuned for, and may go down to a quarter of it (a small batch makes the most progress per sample early in
// training) and up to 32 times it.
constexpr int64_t kDefaultAutoStartBatch = 128;
constexpr int64_t kDefaultAutoMinBatch = 32;
constexpr int64_t kDefaultAutoMaxBatch = 4096;

struct BatchSizing {
  enum class Mode { Fixed, Auto, Schedule };
  Mode mode = Mode::Fixed;
  int64_t minBatch = 0, maxBatch = 0;                    // auto: B in [minBatch, maxBatch]...
  int64_t startBatch = 0;                                // ...starting here, the B --lr is set for
  std::vector<std::pair<int64_t, int64_t>> schedule;     // schedule: (first step, B), steps ascending, from 0
  std::string lrScaling = "auto";                        // --lr-scaling (adaptive/LrScaling.h)
  bool adaptive() const { return mode != Mode::Fixed; }  // B may change during the run
  int64_t largest() const;                               // the largest B the run may use (memory, data checks)

  // The fields a launcher sends its workers (core/FieldList.h): every one.
  BALANCENET_FIELDS(mode, minBatch, maxBatch, startBatch, schedule, lrScaling);
};
BALANCENET_CHECK_FIELDS(BatchSizing);

// "256": fixed; "auto", "auto:MIN:MAX" or "auto:MIN:MAX:START": chosen in [MIN, MAX] from START, the batch the
// learning rate is set for (default 128 brought into the range; auto alone is auto:32:4096:128);
// "64,128@200,256@400": 64 from step 0, 128 from step 200, 256 from step 400. Returns the sizing and sets
// `initial` to the B of step 0. Throws UsageError with one line naming the forms.
BatchSizing parseGlobalBatch(const std::string& text, int64_t& initial);

// The B in force at `step` under a schedule (its first entry before any).
int64_t scheduledBatch(const std::vector<std::pair<int64_t, int64_t>>& schedule, int64_t step);

}  // namespace balancenet::adaptive
