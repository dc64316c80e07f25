// CheckpointOptions: --checkpoint-dir and friends (see docs/reliability.md); an empty dir, no checkpoints. Part
// of job/JobConfig.h.
#pragma once
#include <cstdint>
#include <string>
#include "balancenet/core/FieldList.h"

namespace balancenet::checkpoint {

struct CheckpointOptions {
  std::string dir;
  int64_t every = 100;  // steps between checkpoints; one is also written after the last step
  int keep = 3;         // newest checkpoints kept
  bool resume = false;  // continue from the newest intact checkpoint in dir

  // The fields a launcher sends its workers (core/FieldList.h): every one.
  BALANCENET_FIELDS(dir, every, keep, resume);
};
BALANCENET_CHECK_FIELDS(CheckpointOptions);

}  // namespace balancenet::checkpoint
