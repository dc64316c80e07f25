// state_dict export: every parameter and buffer under its module name, values intact, readable back.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/serialize.h>

#include <fstream>
#include <iterator>

#include "balancenet/models/ModelZoo.h"
#include "balancenet/models/StateDictExport.h"
#include "testing/TempDir.h"

namespace balancenet::models {
namespace {

TEST(StateDictExport, HoldsEveryParameterAndBufferByName) {
  testing::TempDir dir;
  ModelOptions options;
  options.name = "resnet18";  // parameters and BatchNorm buffers
  options.width = 0.125;
  auto built = buildModel(options);
  const auto path = dir.file("model.pt");
  exportStateDict(*built.net, path);

  std::ifstream in(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto state = torch::pickle_load(bytes).toGenericDict();
  const auto params = built.net->named_parameters();
  const auto buffers = built.net->named_buffers();
  ASSERT_EQ(state.size(), params.size() + buffers.size());
  for (const auto& item : params) {
    ASSERT_TRUE(state.contains(item.key())) << item.key();
    EXPECT_TRUE(at::equal(state.at(item.key()).toTensor(), item.value())) << item.key();
  }
  for (const auto& item : buffers) {
    ASSERT_TRUE(state.contains(item.key())) << item.key();
    EXPECT_TRUE(at::equal(state.at(item.key()).toTensor(), item.value())) << item.key();
  }
  EXPECT_TRUE(state.contains("layers.0.weight"));
}

}  // namespace
}  // namespace balancenet::models
