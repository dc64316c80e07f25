// Header layout (one long tensor): [count, then per tensor: scalar type, rank (number of dimensions),
// sizes...]. Its length goes first in a one-element message, so the receiver can allocate it.
#include "balancenet/pipeline/TensorListMessage.h"

#include <ATen/ATen.h>

#include "balancenet/core/Error.h"

namespace balancenet::pipeline {

int messagesFor(size_t count) { return 2 + static_cast<int>(count); }

std::vector<comm::PendingWork> sendTensorList(comm::Communicator& comm, const std::vector<at::Tensor>& tensors, int dst,
                                              int tag) {
  std::vector<int64_t> header{static_cast<int64_t>(tensors.size())};
  for (const auto& t : tensors) {
    header.push_back(static_cast<int64_t>(t.scalar_type()));
    header.push_back(t.dim());
    for (const auto size : t.sizes()) header.push_back(size);
  }
  std::vector<comm::PendingWork> works;
  works.push_back(comm.sendAsync(at::full({1}, static_cast<int64_t>(header.size()), at::kLong), dst, tag++));
  works.push_back(comm.sendAsync(at::tensor(header, at::kLong), dst, tag++));
  for (const auto& t : tensors) works.push_back(comm.sendAsync(t.detach().contiguous(), dst, tag++));
  return works;
}

std::vector<at::Tensor> recvTensorList(comm::Communicator& comm, int src, int tag) {
  auto length = at::empty({1}, at::kLong);
  comm.recv(length, src, tag++);
  auto header = at::empty({length.item<int64_t>()}, at::kLong);
  comm.recv(header, src, tag++);
  const int64_t* h = header.data_ptr<int64_t>();
  const int64_t* const end = h + header.numel();
  std::vector<at::Tensor> tensors(*h++);
  for (auto& t : tensors) {
    if (end - h < 2 || end - h < 2 + h[1]) throw InternalError("a tensor list's header is shorter than it says");
    const auto type = static_cast<at::ScalarType>(h[0]);
    const std::vector<int64_t> sizes(h + 2, h + 2 + h[1]);
    h += 2 + sizes.size();
    t = at::empty(sizes, at::TensorOptions().dtype(type));
    comm.recv(t, src, tag++);
  }
  return tensors;
}

}  // namespace balancenet::pipeline
