// TensorListMessage: a list of tensors of any count, shapes and dtypes sent point to point, the receiver
// learning what to allocate from a header: how a re-partition moves a block with its optimiser state.
#pragma once
#include <vector>

#include <ATen/core/Tensor.h>

#include "balancenet/comm/group/Communicator.h"

namespace balancenet::pipeline {

// The messages a list of `count` tensors takes (the header's length, the header, one per tensor): the
// receiver's tags are `tag` .. `tag + messagesFor(count) - 1`.
int messagesFor(size_t count);

// Posts the list's messages to `dst` without waiting (tags from `tag` up); the handles are waited for by
// the caller, the tensors kept alive until then (the handles hold them).
std::vector<comm::PendingWork> sendTensorList(comm::Communicator& comm, const std::vector<at::Tensor>& tensors, int dst,
                                              int tag);
// Receives, blocking, the list `src` sent with `tag`; the tensors are new.
std::vector<at::Tensor> recvTensorList(comm::Communicator& comm, int src, int tag);

}  // namespace balancenet::pipeline
