#include "balancenet/trainer/TrainingState.h"

#include <ATen/ATen.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <sstream>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/device/DeviceRandom.h"

namespace balancenet::trainer {
namespace {

void writeList(torch::serialize::OutputArchive& archive, const std::string& name, const std::vector<at::Tensor>& list) {
  torch::serialize::OutputArchive nested;
  nested.write("count", c10::IValue(static_cast<int64_t>(list.size())));
  for (size_t i = 0; i < list.size(); ++i) nested.write(std::to_string(i), list[i].detach());
  archive.write(name, nested);
}

std::vector<at::Tensor> readList(torch::serialize::InputArchive& archive, const std::string& name) {
  torch::serialize::InputArchive nested;
  archive.read(name, nested);
  c10::IValue count;
  nested.read("count", count);
  std::vector<at::Tensor> list(count.toInt());
  for (size_t i = 0; i < list.size(); ++i) nested.read(std::to_string(i), list[i]);
  return list;
}

int64_t readInt(torch::serialize::InputArchive& archive, const std::string& name) {
  c10::IValue value;
  archive.read(name, value);
  return value.toInt();
}

}  // namespace

std::string toBytes(const TrainingState& s) {
  torch::serialize::OutputArchive archive;
  archive.write("step", c10::IValue(s.step));
  archive.write("position", c10::IValue(s.position));
  archive.write("samples", c10::IValue(s.samples));
  writeList(archive, "parameters", s.parameters);
  writeList(archive, "buffers", s.buffers);
  archive.write("optimizer", c10::IValue(s.optimizer));
  archive.write("has_rng", c10::IValue(s.rng.defined()));
  if (s.rng.defined()) archive.write("rng", s.rng);
  if (s.gpuRng.defined()) archive.write("gpu_rng", s.gpuRng);  // a CPU worker's bytes stay as they were
  if (s.lossScaler.defined()) archive.write("loss_scaler", s.lossScaler);
  std::ostringstream out;
  archive.save_to(out);
  return out.str();
}

TrainingState fromBytes(const std::string& bytes) {
  try {
    std::istringstream in(bytes);
    torch::serialize::InputArchive archive;
    archive.load_from(in);
    TrainingState s;
    s.step = readInt(archive, "step");
    s.position = readInt(archive, "position");
    s.samples = readInt(archive, "samples");
    s.parameters = readList(archive, "parameters");
    s.buffers = readList(archive, "buffers");
    c10::IValue optimizer, hasRng;
    archive.read("optimizer", optimizer);
    s.optimizer = optimizer.toStringRef();
    archive.read("has_rng", hasRng);
    if (hasRng.toBool()) archive.read("rng", s.rng);
    archive.try_read("gpu_rng", s.gpuRng);          // absent: a CPU worker's state, or an older one
    archive.try_read("loss_scaler", s.lossScaler);  // absent: not fp16
    return s;
  } catch (const std::exception& e) {
    throw RuntimeFailure(fmt::format("not a training state: {}", firstLine(e.what())));
  }
}

std::string parameterStatesToBytes(const std::vector<std::vector<at::Tensor>>& states) {
  std::vector<int64_t> counts;
  std::vector<at::Tensor> flat;
  for (const auto& s : states) {
    counts.push_back(static_cast<int64_t>(s.size()));
    flat.insert(flat.end(), s.begin(), s.end());
  }
  torch::serialize::OutputArchive archive;
  archive.write("counts", at::tensor(counts, at::kLong));
  writeList(archive, "states", flat);
  std::ostringstream out;
  archive.save_to(out);
  return out.str();
}

std::vector<std::vector<at::Tensor>> parameterStatesFromBytes(const std::string& bytes) {
  try {
    std::istringstream in(bytes);
    torch::serialize::InputArchive archive;
    archive.load_from(in);
    at::Tensor counts;
    archive.read("counts", counts);
    const auto flat = readList(archive, "states");
    std::vector<std::vector<at::Tensor>> states;
    size_t next = 0;
    for (int64_t i = 0; i < counts.numel(); ++i) {
      const auto n = static_cast<size_t>(counts[i].item<int64_t>());
      if (next + n > flat.size()) throw RuntimeFailure("the states run past their tensors");
      states.emplace_back(flat.begin() + next, flat.begin() + next + n);
      next += n;
    }
    if (next != flat.size()) throw RuntimeFailure("tensors left over after the states");
    return states;
  } catch (const std::exception& e) {
    throw RuntimeFailure(fmt::format("not a list of optimiser states: {}", firstLine(e.what())));
  }
}

std::string tensorsToBytes(const std::vector<at::Tensor>& tensors) {
  torch::serialize::OutputArchive archive;
  writeList(archive, "tensors", tensors);
  std::ostringstream out;
  archive.save_to(out);
  return out.str();
}

std::vector<at::Tensor> tensorsFromBytes(const std::string& bytes) {
  try {
    std::istringstream in(bytes);
    torch::serialize::InputArchive archive;
    archive.load_from(in);
    return readList(archive, "tensors");
  } catch (const std::exception& e) {
    throw RuntimeFailure(fmt::format("not a list of tensors: {}", firstLine(e.what())));
  }
}

void applyRandomState(const at::Tensor& rng) { device::restoreGeneratorState(c10::Device(c10::DeviceType::CPU), rng); }

}  // namespace balancenet::trainer
