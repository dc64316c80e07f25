// state_dict export through libtorch's pickler.
#include "balancenet/models/StateDictExport.h"

#include <ATen/core/Dict.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>
#include <torch/nn/module.h>
#include <torch/serialize.h>

#include <sstream>

#include "balancenet/core/AtomicFile.h"

namespace balancenet::models {
namespace {

// torch::pickle_save's zip archive, but with the dict's type tag left out: torch.load (weights_only=True by
// default since torch 2.6) refuses the tag's torch.jit._pickle.restore_type_tag, and a plain dict of tensors
// is what Python's state_dict is anyway.
std::vector<char> pickleUntagged(const c10::IValue& value) {
  std::vector<char> pickled;
  torch::jit::Pickler pickler([&](const char* buf, size_t size) { pickled.insert(pickled.end(), buf, buf + size); },
                              nullptr, nullptr, nullptr, nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(value);
  pickler.stop();
  std::vector<char> archive;
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* bytes, size_t size) {
    const char* b = static_cast<const char*>(bytes);
    archive.insert(archive.end(), b, b + size);
    return size;
  });
  torch::jit::writeArchiveAndTensors("data", pickled.data(), pickled.size(), pickler.tensorData(), writer);
  writer.writeEndOfFile();
  return archive;
}

}  // namespace

void exportStateDict(const torch::nn::Module& module, const std::string& path) {
  c10::Dict<std::string, at::Tensor> state;
  // Contiguous CPU copies detached from autograd: what a state_dict holds in Python.
  for (const auto& item : module.named_parameters())
    state.insert(item.key(), item.value().detach().contiguous().clone());
  for (const auto& item : module.named_buffers()) state.insert(item.key(), item.value().detach().contiguous().clone());
  const auto bytes = pickleUntagged(state);
  writeFileAtomically(path, std::string(bytes.begin(), bytes.end()));
}

void saveParameters(const std::vector<at::Tensor>& parameters, const std::string& path) {
  std::ostringstream out;
  torch::save(parameters, out);
  writeFileAtomically(path, out.str());
}

}  // namespace balancenet::models
