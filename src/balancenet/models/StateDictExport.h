// StateDictExport: a model's parameters and buffers in a file PyTorch's Python API reads in one call.
#pragma once
#include <string>

namespace torch::nn {
class Module;
}

namespace balancenet::models {

// Writes {name: tensor} for every parameter and buffer of `module` (the names of named_parameters() and
// named_buffers(), e.g. "layers.0.weight") with torch::pickle_save, the format of Python's torch.save:
// `model.load_state_dict(torch.load(path))` in Python, `torch::pickle_load` in C++. Atomic: a reader
// sees the old file or the whole new one.
void exportStateDict(const torch::nn::Module& module, const std::string& path);

}  // namespace balancenet::models
