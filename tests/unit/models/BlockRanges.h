// BlockRanges: cutting a network into block ranges and chaining them, for the tests of Network::blocks().
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "balancenet/models/ModelZoo.h"
#include "balancenet/models/Network.h"

namespace balancenet::models::blocktest {

inline std::vector<std::string> blockNames(const std::vector<BlockInfo>& blocks) {
  std::vector<std::string> names;
  for (const auto& b : blocks) names.push_back(b.name);
  return names;
}

// The blocks' FLOPs, memory and parameters add up to the model's, each block's output elements are its
// shape's product and each costs some memory.
inline void expectBlocksAddUpTo(const std::vector<BlockInfo>& blocks, const ModelInfo& info) {
  int64_t flops = 0, memory = 0, parameters = 0;
  for (const auto& b : blocks) {
    int64_t elements = 1;
    for (int64_t d : b.outputShape) elements *= d;
    EXPECT_EQ(b.outputElementsPerSample, elements) << b.name;
    EXPECT_GT(b.memoryPerSampleBytes, 0) << b.name;
    flops += b.flopsPerSample;
    memory += b.memoryPerSampleBytes;
    parameters += b.parameters;
  }
  EXPECT_EQ(flops, info.flopsPerSample);
  EXPECT_EQ(memory, info.memoryPerSampleBytes);
  EXPECT_EQ(parameters, info.parameters);
}

// Cut points [0, c1, ..., n] of three ranges (n >= 3).
inline std::vector<size_t> thirds(size_t n) { return {0, n / 3, 2 * n / 3, n}; }

// Every single block, halves, thirds.
inline std::vector<std::vector<size_t>> cutsOf(size_t n) {
  std::vector<size_t> single;
  for (size_t i = 0; i <= n; ++i) single.push_back(i);
  return {single, {0, n / 2, n}, thirds(n)};
}

inline std::vector<std::shared_ptr<BlockRange>> rangesFor(Network& net, const std::vector<size_t>& cuts) {
  std::vector<std::shared_ptr<BlockRange>> ranges;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) ranges.push_back(net.blockRange(cuts[i], cuts[i + 1]));
  return ranges;
}

inline at::Tensor chain(const std::vector<std::shared_ptr<BlockRange>>& ranges, at::Tensor x) {
  for (const auto& r : ranges) x = r->forward(x);
  return x;
}

// The TensorImpls of `module`'s parameters, in order: equal lists are the very same tensors.
inline std::vector<at::TensorImpl*> parameterImpls(const torch::nn::Module& module) {
  std::vector<at::TensorImpl*> impls;
  for (const auto& p : module.parameters()) impls.push_back(p.unsafeGetTensorImpl());
  return impls;
}

// The parameters of the ranges of `cuts`, concatenated.
inline std::vector<at::TensorImpl*> rangeParameterImpls(Network& net, const std::vector<size_t>& cuts) {
  std::vector<at::TensorImpl*> impls;
  for (const auto& range : rangesFor(net, cuts)) {
    const auto part = parameterImpls(*range);
    impls.insert(impls.end(), part.begin(), part.end());
  }
  return impls;
}

// The gradients `backward` leaves on `net`'s parameters (they are zeroed first and cleared after).
inline std::vector<at::Tensor> gradientsAfter(Network& net, const std::function<void()>& backward) {
  net.zero_grad();
  backward();
  std::vector<at::Tensor> grads;
  for (const auto& p : net.parameters()) grads.push_back(p.grad().defined() ? p.grad().clone() : at::Tensor());
  net.zero_grad();
  return grads;
}

// Backward of a cross-entropy loss through the whole net and through `ranges` chained: the same gradients.
inline void expectTheNetworksGradients(Network& net, const std::vector<std::shared_ptr<BlockRange>>& ranges,
                                       const at::Tensor& x, const at::Tensor& labels) {
  net.train();
  const auto whole = gradientsAfter(net, [&] { at::cross_entropy_loss(net.forward(x), labels).backward(); });
  const auto chained = gradientsAfter(net, [&] { at::cross_entropy_loss(chain(ranges, x), labels).backward(); });
  ASSERT_EQ(chained.size(), whole.size());
  for (size_t i = 0; i < whole.size(); ++i) {
    ASSERT_TRUE(whole[i].defined()) << "parameter " << i << " got no gradient";
    EXPECT_TRUE(chained[i].defined() && at::equal(chained[i], whole[i])) << "parameter " << i;
  }
}

}  // namespace balancenet::models::blocktest
