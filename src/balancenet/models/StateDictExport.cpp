// state_dict export through libtorch's pickler.
#include "balancenet/models/StateDictExport.h"

#include <ATen/core/Dict.h>
#include <torch/nn/module.h>
#include <torch/serialize.h>

#include <sstream>

#include "balancenet/core/AtomicFile.h"

namespace balancenet::models {

void exportStateDict(const torch::nn::Module& module, const std::string& path) {
  c10::Dict<std::string, at::Tensor> state;
  // Contiguous CPU copies detached from autograd: what a state_dict holds in Python.
  for (const auto& item : module.named_parameters())
    state.insert(item.key(), item.value().detach().contiguous().clone());
  for (const auto& item : module.named_buffers()) state.insert(item.key(), item.value().detach().contiguous().clone());
  const auto bytes = torch::pickle_save(state);
  writeFileAtomically(path, std::string(bytes.begin(), bytes.end()));
}

void saveParameters(const std::vector<at::Tensor>& parameters, const std::string& path) {
  std::ostringstream out;
  torch::save(parameters, out);
  writeFileAtomically(path, out.str());
}

}  // namespace balancenet::models
