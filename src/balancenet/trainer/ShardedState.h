// ShardedState: --shard-state's update. This worker keeps the optimiser state of its own slice of the flattened
// parameters only, a slice sized by its memory (memory/StateSlices); every worker holds the whole summed gradient
// (the exchange of any --comm), updates its slice, and the slices are all-gathered, so every worker ends the step
// with all the parameters, as a replicated update leaves them (the optimisers are elementwise: the same ops on the
// same elements).
#pragma once
#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

#include "balancenet/comm/group/Collectives.h"
#include "balancenet/memory/StateSlices.h"

namespace balancenet::trainer {

class ShardedState {
 public:
  // `sliceSizes`: every worker's slice, in rank order, summing to the parameters' elements.
  ShardedState(const std::vector<at::Tensor>& params, std::vector<int64_t> sliceSizes, int rank);

  // What the optimiser updates: this worker's slice, a leaf of its own read from the parameters.
  const at::Tensor& slice() const { return slice_; }
  // The parameters' values into the slice (at start and after the parameters were set from elsewhere).
  void readSlice();
  // Before the optimiser: the summed gradient's part for this slice as the slice's gradient.
  void takeGradients(const std::vector<at::Tensor>& grads);
  // After the optimiser: every worker's updated slice into every worker's parameters (an all-gather, each slice
  // padded to the largest, into buffers kept from step to step). Returns the bytes this worker sent.
  int64_t shareUpdates(comm::Collectives& comm);

  // Checkpoints hold the optimiser state a replicated optimiser over the parameters would hold, so that a sharded
  // run resumes with any slicing, or replicated. `sliceState`: this worker's slots (trainer::parameterState of the
  // slice: per-element slots the slice's length, scalars such as Adam's step count as they are). A collective:
  // every worker's slots are all-gathered into one state per parameter (empty before the first step).
  std::vector<std::vector<at::Tensor>> gatherParameterStates(const std::vector<at::Tensor>& sliceState,
                                                             comm::Collectives& comm);
  // The inverse, on this worker alone: its slice's slots cut from one state per parameter.
  std::vector<at::Tensor> sliceOfParameterStates(const std::vector<std::vector<at::Tensor>>& perParameter) const;

 private:
  std::vector<at::Tensor> params_;
  std::vector<int64_t> sizes_, offsets_;
  int rank_ = 0;
  std::vector<memory::Piece> mine_;                // this slice's pieces of the parameters
  std::vector<std::vector<memory::Piece>> every_;  // every worker's
  at::Tensor slice_;
  // The all-gather's input and outputs (world x the largest slice): made once, as OffloadSync keeps its receives.
  at::Tensor padded_;
  std::vector<at::Tensor> gathered_;
};

}  // namespace balancenet::trainer
