#include "balancenet/checkpoint/ModelSignature.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace balancenet::checkpoint {
namespace {

// The element count is the product of the dimensions after the name ("conv1.weight 32x1x5x5").
int64_t elementsOf(const std::string& tensor) {
  int64_t n = 1;
  size_t pos = tensor.rfind(' ');
  if (pos == std::string::npos) return 0;
  std::string dims = tensor.substr(pos + 1);
  size_t start = 0;
  while (start <= dims.size()) {
    size_t end = dims.find('x', start);
    if (end == std::string::npos) end = dims.size();
    if (end > start) n *= std::stoll(dims.substr(start, end - start));
    start = end + 1;
  }
  return n;
}

}  // namespace

ModelSignature ModelSignature::of(const std::string& model, const models::Network& net) {
  ModelSignature s;
  s.model = model;
  for (const auto& item : net.named_parameters())
    s.tensors.push_back(fmt::format("{} {}", item.key(), fmt::join(item.value().sizes(), "x")));
  return s;
}

std::string ModelSignature::describe() const {
  int64_t parameters = 0;
  for (const auto& t : tensors) parameters += elementsOf(t);
  return fmt::format("{} ({} tensors, {} parameters)", model, tensors.size(), parameters);
}

std::string ModelSignature::difference(const ModelSignature& other) const {
  if (model != other.model) return fmt::format("model {} vs {}", model, other.model);
  if (tensors.size() != other.tensors.size())
    return fmt::format("{} vs {} parameter tensors", tensors.size(), other.tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i] != other.tensors[i]) return fmt::format("tensor {}: {} vs {}", i, tensors[i], other.tensors[i]);
  return "";
}

}  // namespace balancenet::checkpoint
