// A small checkpoint with every section filled, for the format and store tests.
#pragma once
#include <string>

#include "balancenet/checkpoint/CheckpointFile.h"

namespace balancenet::checkpoint::testing {

inline Checkpoint sampleCheckpoint(int64_t step) {
  Checkpoint c;
  c.run.signature = {"mlp", {"layers.0.weight 64x784", "layers.0.bias 64"}};
  c.run.optimizer = "sgd";
  c.run.worldSize = 2;
  c.run.globalBatch = 32;
  c.run.seed = 7;
  c.step = step;
  c.training = std::string("training state \0 with a zero byte", 33) + std::to_string(step);
  c.allocator = R"({"split":[20,12]})";
  c.rng = {"rank zero's generator", "rank one's generator"};
  return c;
}

}  // namespace balancenet::checkpoint::testing
