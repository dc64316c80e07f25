// StateDictExport: a model's parameters and buffers in a file PyTorch's Python API reads in one call.
#pragma once
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

namespace torch::nn {
class Module;
}

namespace balancenet::models {

// Writes {name: tensor} for every parameter and buffer of `module` (the names of named_parameters() and
// named_buffers(), e.g. "layers.0.weight") with torch::pickle_save, the format of Python's torch.save:
// `model.load_state_dict(torch.load(path))` in Python, `torch::pickle_load` in C++. Atomic: a reader
// sees the old file or the whole new one.
void exportStateDict(const torch::nn::Module& module, const std::string& path);

// --save-params: the parameter list with torch::save (what tests and `torch::load` in C++ read back), atomically.
// One writer for train and federate, so both files have the same format.
void saveParameters(const std::vector<at::Tensor>& parameters, const std::string& path);

}  // namespace balancenet::models
