#include "balancenet/pipeline/BlockMessage.h"

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::pipeline {

BlockMessageParts splitBlockMessage(const std::vector<at::Tensor>& message, size_t parameters, size_t buffers,
                                    size_t block) {
  const size_t tensors = parameters + buffers;
  if (message.size() < tensors + 1 || message[tensors].numel() != static_cast<int64_t>(parameters))
    throw InternalError(
        fmt::format("block {} arrived with {} tensors, not its own {}", block, message.size(), tensors));
  BlockMessageParts parts;
  parts.parameters.assign(message.begin(), message.begin() + parameters);
  parts.buffers.assign(message.begin() + parameters, message.begin() + tensors);
  const int64_t* counts = message[tensors].data_ptr<int64_t>();
  size_t next = tensors + 1;
  for (size_t i = 0; i < parameters; ++i) {
    if (next + counts[i] > message.size()) throw InternalError(fmt::format("block {}'s state is cut short", block));
    parts.states.emplace_back(message.begin() + next, message.begin() + next + counts[i]);
    next += counts[i];
  }
  return parts;
}

}  // namespace balancenet::pipeline
