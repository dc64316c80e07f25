// CheckpointFile: one checkpoint as bytes. Layout (integers little-endian):
//   0  magic "BNCKPT\n\0" (8 bytes)       8  format version (u32)
//   12 header length H (u32)              16 CRC32 of the header (u32)
//   20 payload length P (u64)             28 CRC32 of the payload (u32)
//   32 header: JSON (model signature, optimiser, world size, global batch, seed, step, section sizes)
//   32+H payload: the sections back to back (training state, allocator state, one RNG state per rank, and one GPU
//                 RNG state per rank where any rank computed on a GPU)
// The file is exactly 32+H+P bytes: a truncated, extended or flipped file fails decode() with the reason.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "balancenet/checkpoint/ModelSignature.h"
#include "balancenet/core/Error.h"

namespace balancenet::checkpoint {

constexpr uint32_t kFormatVersion = 1;
constexpr const char* kDataParallelEngine = "data-parallel";
constexpr const char* kPipelineEngine = "pipeline";

// What identifies the run a checkpoint came from (compared with the resuming run's).
struct RunIdentity {
  ModelSignature signature;
  std::string optimizer;  // sgd, adam: their saved states are not interchangeable
  int worldSize = 0;
  int64_t globalBatch = 0;
  uint64_t seed = 0;
  // How the state was laid out: "data-parallel" (one optimiser's archive) or "pipeline" (the whole model
  // block by block, each parameter's optimiser state apart). Files without it are data-parallel ones.
  std::string engine = kDataParallelEngine;
};

struct Checkpoint {
  RunIdentity run;
  int64_t step = 0;              // steps completed
  std::string training;          // trainer::toBytes of rank 0's TrainingState
  std::string allocator;         // Allocator::saveState of rank 0 (split, fitted node models); may be empty
  std::vector<std::string> rng;  // each rank's CPU generator state, in rank order
  // Each rank's GPU generator state, in rank order (empty for a CPU rank); none at all where every rank computed on
  // the CPU, as in files from before GPU generators were kept.
  std::vector<std::string> gpuRng;
  // Each rank's gradient exchange state (GradientSync::saveState: --grad-compress's error feedback, PowerSGD's Q), in
  // rank order, as trainer::tensorsToBytes; none where the exchange keeps none (exact exchanges, older files).
  std::vector<std::string> syncState;
};

// A file that is not a whole, intact checkpoint of a known format.
class CorruptCheckpoint : public RuntimeFailure {
 public:
  using RuntimeFailure::RuntimeFailure;
};

std::string encode(const Checkpoint& checkpoint);
// Throws CorruptCheckpoint naming what is wrong (magic, version, length, checksum, header).
Checkpoint decode(const std::string& bytes);

}  // namespace balancenet::checkpoint
