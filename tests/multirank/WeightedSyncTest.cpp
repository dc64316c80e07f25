// The engine's central promise: N ranks with unequal batches train exactly like one process on the
// whole global batch (golden reference: testing/ReferenceTraining, a plain libtorch loop).
#include <gtest/gtest.h>

#include "balancenet/data/GlobalPermutationSampler.h"
#include "balancenet/orchestrator/StaticAllocator.h"
#include "testing/ChangingAllocator.h"
#include "testing/DistributedTraining.h"
#include "testing/FloatBound.h"
#include "testing/ReferenceTraining.h"
#include "testing/SyntheticData.h"

namespace balancenet {
namespace {

struct Case {
  std::string name;
  std::string model;
  std::vector<int64_t> split;
  std::string optimizer;
  double weightDecay;
};

trainer::TrainerOptions optionsFor(const Case& c, int64_t steps) {
  return testing::comparisonOptions(c.optimizer, steps, Split{c.split}.total(), c.weightDecay);
}

models::ModelOptions modelFor(const std::string& name) { return testing::comparisonModel(name); }

class WeightedSyncTest : public ::testing::TestWithParam<Case> {};

TEST_P(WeightedSyncTest, UnequalSplitMatchesSingleProcess) {
  const Case& c = GetParam();
  const auto train = testing::syntheticDataset(300, 3);
  const auto options = optionsFor(c, 5);
  const auto model = modelFor(c.model);
  const Split split{c.split};
  auto dist = testing::distributedTraining(
      model, options, train,
      {split.worldSize(), [&] { return std::make_unique<orchestrator::StaticAllocator>(split); }});
  auto ref = testing::referenceTraining(model, options, train);
  const double diff = testing::maxAbsDifference(dist, ref);
  const double bound = testing::exactnessBound(ref, options.steps);
  std::printf("[%s] split %s: max |param difference| vs single process = %.3g (float bound %.3g)\n", c.name.c_str(),
              split.str().c_str(), diff, bound);
  EXPECT_LT(diff, bound);
}

INSTANTIATE_TEST_SUITE_P(Splits, WeightedSyncTest,
                         ::testing::Values(Case{"mlp_sgd_2", "mlp", {63, 1}, "sgd", 0.0},
                                           Case{"mlp_sgd_wd_3", "mlp", {1, 40, 23}, "sgd", 5e-4},
                                           Case{"mlp_adam_4", "mlp", {10, 20, 30, 4}, "adam", 1e-4},
                                           Case{"cnn_sgd_wd_3", "cnn", {5, 1, 26}, "sgd", 5e-4},
                                           Case{"cnn_adam_2", "cnn", {1, 31}, "adam", 0.0}),
                         [](const auto& info) { return info.param.name; });

TEST(WeightedSync, SplitChangingEveryStepMatchesSingleProcess) {
  const auto train = testing::syntheticDataset(200, 4);
  Case c{"changing", "mlp", {16, 16, 16}, "sgd", 1e-4};
  const auto options = optionsFor(c, 6);
  const std::vector<Split> splits{Split{{1, 1, 46}}, Split{{30, 10, 8}}, Split{{16, 16, 16}}};
  auto dist = testing::distributedTraining(modelFor("mlp"), options, train,
                                           {3, [&] { return std::make_unique<testing::ChangingAllocator>(splits); }});
  auto ref = testing::referenceTraining(modelFor("mlp"), options, train);
  EXPECT_LT(testing::maxAbsDifference(dist, ref), testing::exactnessBound(ref, options.steps));
}

// Negative control: averaging the local means (what an unweighted all-reduce does) is measurably
// wrong with unequal batches, by far more than the float bound above: it is tight enough to catch a missing weight.
TEST(WeightedSync, UnweightedAveragingWouldBeDetected) {
  const auto train = testing::syntheticDataset(300, 3);
  Case c{"control", "mlp", {63, 1}, "sgd", 0.0};
  auto options = optionsFor(c, 5);
  auto ref = testing::referenceTraining(modelFor("mlp"), options, train);
  // Reference on batches of 32 each half: equal weighting of a 63-sample and a 1-sample mean.
  std::vector<at::Tensor> wrong;
  {
    at::manual_seed(options.seed);
    auto built = models::buildModel(modelFor("mlp"));
    std::vector<at::Tensor> params;
    for (auto& p : built.net->parameters()) params.push_back(p);
    auto opt = trainer::makeOptimizer(options.optimizer, params, options.lr.at(0));
    data::GlobalPermutationSampler sampler(train.size(), options.seed);
    for (int64_t s = 0; s < options.steps; ++s) {
      trainer::setLearningRate(*opt, options.lr.at(s));
      opt->zero_grad();
      auto a = sampler.indicesAt(s * 64, 63), b = sampler.indicesAt(s * 64 + 63, 1);
      auto la = at::cross_entropy_loss(built.net->forward(train.imagesAt(a)), train.labelsAt(a));
      auto lb = at::cross_entropy_loss(built.net->forward(train.imagesAt(b)), train.labelsAt(b));
      ((la + lb) / 2).backward();
      opt->step();
    }
    for (auto& p : built.net->parameters()) wrong.push_back(p.detach().clone());
    for (auto& x : built.net->buffers()) wrong.push_back(x.detach().clone());
  }
  const double wrongBy = testing::maxAbsDifference(wrong, ref), bound = testing::exactnessBound(ref, options.steps);
  std::printf("unweighted averaging: max |param difference| %.3g, float bound %.3g\n", wrongBy, bound);
  EXPECT_GT(wrongBy, 10 * bound);
}

}  // namespace
}  // namespace balancenet
