// --export: the trained state_dict is what PyTorch's Python API loads in one call (load_state_dict).
#include <gtest/gtest.h>

#include "testing/NumpyScript.h"

#include <cstdlib>
#include <fstream>
#include <iterator>

#include <ATen/ATen.h>
#include <torch/serialize.h>
#include <nlohmann/json.hpp>

#include "BinaryFixture.h"

namespace balancenet::testing {
namespace {

class Export : public BinaryFixture {};

TEST_F(Export, PyTorchLoadsTheTrainedWeightsIntoItsOwnModel) {
  auto r = train({"--nodes", "2", "--model", "mlp", "--dropout", "0", "--steps", "3", "--global-batch", "16",
                  "--export", dir_.file("mlp.pt")});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::ifstream in(dir_.file("mlp.pt"), std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto state = torch::pickle_load(bytes).toGenericDict();
  ASSERT_EQ(state.size(), 6u);  // three Linear layers, weight and bias

  ASSERT_TRUE(pythonTorchInstalled()) << BALANCENET_PYTHON_EXE << " has no torch (scripts/setup.sh)";
  ProcessOptions o;
  o.timeoutSeconds = 120;
  auto py = runProcess(
      {BALANCENET_PYTHON_EXE, std::string(BALANCENET_SOURCE_DIR) + "/examples/load_in_pytorch.py", dir_.file("mlp.pt")},
      o);
  ASSERT_EQ(py.exitCode, 0) << py.output;
  const auto loaded = nlohmann::json::parse(py.output.substr(py.output.find('{')));
  ASSERT_EQ(loaded.size(), state.size());
  for (const auto& entry : state) {
    const auto name = entry.key().toStringRef();
    ASSERT_TRUE(loaded.contains(name)) << name;
    const auto t = entry.value().toTensor();
    const double tolerance = 1e-4 * (1 + t.abs().sum().item<double>());
    EXPECT_NEAR(loaded[name][1].get<double>(), t.sum().item<double>(), tolerance) << name;
  }
}

TEST_F(Export, ATrainedTorchScriptModelGoesBackIntoItsPythonClass) {
  const std::string fixture = std::string(BALANCENET_SOURCE_DIR) + "/tests/fixtures/tiny_cnn.pt";
  auto r = train({"--model", fixture, "--steps", "2", "--global-batch", "8", "--export", dir_.file("tiny.pt")});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::ifstream in(dir_.file("tiny.pt"), std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto state = torch::pickle_load(bytes).toGenericDict();
  for (const char* name : {"conv.weight", "conv.bias", "fc.weight", "fc.bias"})
    EXPECT_TRUE(state.contains(std::string(name))) << name;
  EXPECT_EQ(state.size(), 4u);

  ASSERT_TRUE(pythonTorchInstalled()) << BALANCENET_PYTHON_EXE << " has no torch (scripts/setup.sh)";
  const std::string script =
      "import sys, torch; sys.path.insert(0, '" + std::string(BALANCENET_SOURCE_DIR) +
      "/examples'); from script_model import TinyCnn; m = TinyCnn(); "
      "m.load_state_dict(torch.load(sys.argv[1])); print('loaded', sum(1 for _ in m.parameters()))";
  ProcessOptions o;
  o.timeoutSeconds = 120;
  auto py = runProcess({BALANCENET_PYTHON_EXE, "-c", script, dir_.file("tiny.pt")}, o);
  ASSERT_EQ(py.exitCode, 0) << py.output;
  EXPECT_NE(py.output.find("loaded 4"), std::string::npos) << py.output;
}

}  // namespace
}  // namespace balancenet::testing
