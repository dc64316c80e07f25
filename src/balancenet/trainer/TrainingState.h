// TrainingState: what a run needs to go on exactly where it was. One format for checkpoints (to disk)
// and for elastic recovery (to a joining or lagging peer), so both restore the same things.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

namespace balancenet::trainer {

struct TrainingState {
  int64_t step = 0;      // steps completed
  int64_t position = 0;  // sampler stream position of the next step's first sample
  int64_t samples = 0;   // samples trained so far (the split may change the total per step)
  std::vector<at::Tensor> parameters;
  std::vector<at::Tensor> buffers;
  std::string optimizer;  // the optimiser's own serialisation (momentum, Adam moments, step counts)
  at::Tensor rng;         // this process's CPU generator (dropout masks); undefined: leave it as is
  // A GPU worker's generator (dropout masks on its GPU); undefined: a CPU worker's state, or one from before GPU
  // generators were kept: a GPU worker's stays as it is. Absent from the bytes when undefined.
  at::Tensor gpuRng;
  // --precision fp16's loss scaler: [scale, good steps, skips in a row, skipped steps] as doubles; undefined in
  // the other precisions, and then absent from the bytes.
  at::Tensor lossScaler;
  // This rank's gradient exchange state (GradientSync::saveState), on the host; empty: none. Per rank, so not in
  // toBytes (rank 0's bytes go to every joiner): checkpoints keep every rank's beside it, as they keep the
  // generators, and a re-formed group starts without.
  std::vector<at::Tensor> syncState;
};

// Bytes in torch's archive format; fromBytes throws RuntimeFailure on anything else.
std::string toBytes(const TrainingState& state);
TrainingState fromBytes(const std::string& bytes);

// Each parameter's optimiser state (trainer::parameterState's tensors), in parameter order, as bytes and
// back: TrainingState::optimizer of a state that must not depend on which process holds which parameter
// (a pipeline's checkpoint). The reader throws RuntimeFailure on anything else.
std::string parameterStatesToBytes(const std::vector<std::vector<at::Tensor>>& states);
std::vector<std::vector<at::Tensor>> parameterStatesFromBytes(const std::string& bytes);

// A list of tensors as bytes in torch's archive format and back (TrainingState::syncState in a checkpoint); the
// reader throws RuntimeFailure on anything else.
std::string tensorsToBytes(const std::vector<at::Tensor>& tensors);
std::vector<at::Tensor> tensorsFromBytes(const std::string& bytes);

// Installs `rng` as this process's CPU generator state (dropout masks); an undefined tensor leaves it as is.
void applyRandomState(const at::Tensor& rng);

}  // namespace balancenet::trainer
