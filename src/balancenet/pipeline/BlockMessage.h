// BlockMessage: the layout in which a block travels with its optimiser state (PipelineTrainer::blockMessage),
// read back by a re-partition's receiver and by a checkpoint's gather: the block's parameters, its buffers,
// a long tensor with each parameter's count of state tensors, then those state tensors in parameter order.
#pragma once
#include <cstddef>
#include <vector>

#include <ATen/core/Tensor.h>

namespace balancenet::pipeline {

struct BlockMessageParts {
  std::vector<at::Tensor> parameters;
  std::vector<at::Tensor> buffers;
  std::vector<std::vector<at::Tensor>> states;  // each parameter's optimiser state
};

// The parts of `message`, the message of block `block` of `parameters` parameters and `buffers` buffers (the
// receiver knows both counts from its own network). Throws InternalError when it is not such a message.
BlockMessageParts splitBlockMessage(const std::vector<at::Tensor>& message, size_t parameters, size_t buffers,
                                    size_t block);

}  // namespace balancenet::pipeline
