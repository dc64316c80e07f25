// gpt against nanoGPT's model in plain PyTorch (the project's Python): the same weights give the same
// loss and gradients.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/core/Dict.h>
#include <gtest/gtest.h>
#include <torch/serialize.h>

#include "GptTesting.h"
#include "balancenet/models/ModelZoo.h"
#include "balancenet/models/StateDictExport.h"
#include "testing/NumpyScript.h"
#include "testing/ProcessRunner.h"
#include "testing/TempDir.h"

namespace balancenet::models {
namespace {

using gpttest::kContext;

void writeFile(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

c10::Dict<c10::IValue, c10::IValue> readPickle(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return torch::pickle_load(bytes).toGenericDict();
}

TEST(GptReference, LossAndGradientsEqualNanoGptsInPyTorch) {
  ASSERT_TRUE(testing::pythonTorchInstalled()) << BALANCENET_PYTHON_EXE << " has no torch (scripts/setup.sh)";
  testing::TempDir dir;
  at::manual_seed(2024);
  BuiltModel m = buildModel(gpttest::smallGpt());
  m.net->train();
  const at::Tensor x = gpttest::tokens(4, kContext, 11), y = gpttest::tokens(4, kContext, 12);
  exportStateDict(*m.net, dir.file("state.pt"));
  c10::Dict<std::string, at::Tensor> batch;
  batch.insert("x", x);
  batch.insert("y", y);
  writeFile(dir.file("batch.pt"), torch::pickle_save(batch));

  m.net->zero_grad();
  const at::Tensor logits = m.net->forward(x);
  const at::Tensor loss = gpttest::tokenLoss(logits, y);
  loss.backward();

  testing::ProcessOptions o;
  o.timeoutSeconds = 120;
  const auto py = testing::runProcess(
      {BALANCENET_PYTHON_EXE, std::string(BALANCENET_SOURCE_DIR) + "/tests/unit/models/gpt_reference.py",
       dir.file("state.pt"), dir.file("batch.pt"), dir.file("reference.pt"), std::to_string(gpttest::kHeads)},
      o);
  ASSERT_EQ(py.exitCode, 0) << py.output;
  const auto reference = readPickle(dir.file("reference.pt"));

  const double lossDiff = std::abs(loss.item<double>() - reference.at("loss").toTensor().item<double>());
  const double logitsDiff = (logits - reference.at("logits").toTensor()).abs().max().item<double>();
  std::cout << "gpt vs PyTorch: loss " << loss.item<double>() << ", |loss diff| " << lossDiff << ", max |logits diff| "
            << logitsDiff << "\n";
  EXPECT_LT(lossDiff, 1e-5);
  EXPECT_LT(logitsDiff, 1e-5);
  const auto params = m.net->named_parameters();
  ASSERT_EQ(reference.size(), params.size() + 2) << "one gradient per parameter, plus loss and logits";
  double worst = 0;
  for (const auto& p : params) {
    const std::string key = "grad/" + p.key();
    ASSERT_TRUE(reference.contains(key)) << key;
    const double diff = (p.value().grad() - reference.at(key).toTensor()).abs().max().item<double>();
    EXPECT_LT(diff, 1e-5) << p.key();
    worst = std::max(worst, diff);
  }
  std::cout << "max |gradient diff| over " << params.size() << " parameters: " << worst << "\n";
}

}  // namespace
}  // namespace balancenet::models
