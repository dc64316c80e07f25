// What every group does the same way on top of its operations.
#include "balancenet/comm/group/Collectives.h"

#include <algorithm>

#include <ATen/ATen.h>

namespace balancenet::comm {

void Collectives::allreduceSum(at::Tensor& tensor) {
  std::vector<at::Tensor> one{tensor};
  allreduceSum(one);
}

// Lengths first, then the texts padded to the longest: an all-gather needs equal shapes.
std::vector<std::string> Collectives::allgatherText(const std::string& text) {
  const auto lengths = allgather(at::full({1}, static_cast<int64_t>(text.size()), at::kLong));
  int64_t longest = 0;
  for (const auto& l : lengths) longest = std::max(longest, l.item<int64_t>());
  auto padded = at::zeros({std::max<int64_t>(longest, 1)}, at::kByte);
  std::copy(text.begin(), text.end(), reinterpret_cast<char*>(padded.data_ptr<uint8_t>()));
  std::vector<std::string> out;
  const auto parts = allgather(padded);
  for (int r = 0; r < size(); ++r)
    out.emplace_back(reinterpret_cast<const char*>(parts[r].data_ptr<uint8_t>()), lengths[r].item<int64_t>());
  return out;
}

}  // namespace balancenet::comm
