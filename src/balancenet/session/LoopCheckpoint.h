// LoopCheckpoint: where a session stands, for a checkpoint that a framework writes (Lightning's ModelCheckpoint
// keeps it with the model and optimiser): steps done, the next global batch, and the allocator's state (the split
// in force, the fitted node models), so that a resumed run trains the same samples under the same split.
#pragma once
#include <cstdint>
#include <string>

namespace balancenet::session {

struct LoopCheckpoint {
  int64_t step = 0;         // steps done
  int64_t batch = 0;        // the next global batch of the stream
  int64_t globalBatch = 0;  // what the stream is made of: a checkpoint of another job is refused
  int64_t datasetSize = 0;
  uint64_t seed = 0;
  int worldSize = 0;      // the allocator's state applies only to a world of the same size
  std::string allocator;  // Allocator::saveState()
};

// JSON text (the framework stores it as a string).
std::string encodeLoopCheckpoint(const LoopCheckpoint& point);
// UsageError with one line for text that is not such a checkpoint.
LoopCheckpoint decodeLoopCheckpoint(const std::string& text);

}  // namespace balancenet::session
