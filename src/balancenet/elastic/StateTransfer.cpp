// Bytes over Collectives::broadcast.
#include "balancenet/elastic/StateTransfer.h"

#include <ATen/ATen.h>

#include <cstring>

namespace balancenet::elastic {

std::string broadcastBytes(comm::Collectives& comm, int root, const std::string& bytes) {
  const bool mine = comm.rank() == root;
  std::vector<at::Tensor> length{at::full({1}, mine ? static_cast<int64_t>(bytes.size()) : 0, at::kLong)};
  comm.broadcast(length, root);
  const int64_t n = length[0].item<int64_t>();
  std::vector<at::Tensor> payload{at::empty({n}, at::kByte)};
  if (mine && n > 0) std::memcpy(payload[0].data_ptr<uint8_t>(), bytes.data(), n);
  comm.broadcast(payload, root);
  return std::string(reinterpret_cast<const char*>(payload[0].data_ptr<uint8_t>()), n);
}

}  // namespace balancenet::elastic
