#include "balancenet/trainer/TrainingState.h"

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <sstream>

#include <fmt/format.h>

#include "balancenet/core/Error.h"

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
    return s;
  } catch (const std::exception& e) {
    throw RuntimeFailure(fmt::format("not a training state: {}", firstLine(e.what())));
  }
}

}  // namespace balancenet::trainer
