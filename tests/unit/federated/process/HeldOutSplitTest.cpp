// Federated evaluation's client side: the held-out split of a shard (sizes, disjoint from what trains,
// deterministic) and the evaluation a task asks for.
#include "balancenet/federated/process/HeldOutSplit.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <set>

#include "balancenet/data/TensorDataset.h"
#include "balancenet/federated/process/ClientEvaluation.h"
#include "balancenet/models/ModelForData.h"
#include "balancenet/models/ModelZoo.h"

namespace balancenet::federated {
namespace {

// Sample i's input is the number i, so a batch names the samples it holds.
ClientShard numberedShard(int64_t n) {
  data::DatasetSpec spec;
  spec.inputShape = {1};
  spec.classes = 2;
  auto inputs = at::arange(n, at::kFloat).reshape({n, 1});
  auto targets = at::arange(n, at::kLong).remainder(2);
  return {std::make_shared<data::TensorDataset>(spec, inputs, targets)};
}

std::set<int64_t> numbersIn(const ClientShard& shard, const std::vector<int64_t>& positions) {
  const auto inputs = shard.data->batch(positions).inputs.flatten();
  std::set<int64_t> out;
  for (int64_t i = 0; i < inputs.numel(); ++i) out.insert(static_cast<int64_t>(inputs[i].item<float>()));
  return out;
}

// One test for the split (each process of its own loads torch: CI time is short).
TEST(HeldOutSplit, SizesDeterminismAndNoTrainingBatchHoldsAHeldOutSample) {
  EXPECT_EQ(clientHeldOutCount(100, 0.1), 10);
  EXPECT_EQ(clientHeldOutCount(95, 0.1), 10);  // round(9.5) = 10
  EXPECT_EQ(clientHeldOutCount(5, 0.1), 1);    // at least one when the fraction is above 0
  EXPECT_EQ(clientHeldOutCount(2, 0.9), 1);    // never the whole shard
  EXPECT_EQ(clientHeldOutCount(1, 0.5), 0);
  EXPECT_EQ(clientHeldOutCount(100, 0), 0);
  const auto split = splitShard(100, 0.25, 3, 1);
  EXPECT_EQ(split.train.size(), 75u);
  EXPECT_EQ(split.heldOut.size(), 25u);
  const auto none = splitShard(7, 0, 3, 1);
  EXPECT_TRUE(none.heldOut.empty());
  EXPECT_EQ(none.train, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));  // fraction 0: the shard as it was

  // Deterministic from seed and client, and disjoint from what trains.
  const auto a = splitShard(200, 0.1, 5, 2);
  EXPECT_EQ(a.heldOut, splitShard(200, 0.1, 5, 2).heldOut);
  EXPECT_NE(a.heldOut, splitShard(200, 0.1, 6, 2).heldOut);
  EXPECT_NE(a.heldOut, splitShard(200, 0.1, 5, 3).heldOut);
  std::set<int64_t> all(a.train.begin(), a.train.end());
  for (int64_t p : a.heldOut) EXPECT_TRUE(all.insert(p).second) << p << " both trains and is held out";
  EXPECT_EQ(all.size(), 200u);
  EXPECT_TRUE(std::is_sorted(a.heldOut.begin(), a.heldOut.end()));
  // A draw, not the shard's tail: the data's file order (a class after another) does not pick it.
  EXPECT_LT(a.heldOut.front(), 180);

  // No training batch holds a held-out sample (the samples name themselves).
  const ClientShard shard = numberedShard(60);
  const ClientData local = splitClientData(shard, 0.2, 9, 1);
  ASSERT_TRUE(local.heldOut.has_value());
  EXPECT_EQ(local.train.size(), 48);
  EXPECT_EQ(local.heldOut->size(), 12);
  std::vector<int64_t> every(12);
  for (int64_t i = 0; i < 12; ++i) every[i] = i;
  const auto heldOut = numbersIn(*local.heldOut, every);
  EXPECT_EQ(heldOut.size(), 12u);
  for (int64_t round = 0; round < 3; ++round) {
    LocalBatches batches(9, round, 4, 1, local.train.size(), 16);
    for (int step = 0; step < 8; ++step)  // more than a pass over the 48
      for (int64_t n : numbersIn(local.train, batches.next())) EXPECT_EQ(heldOut.count(n), 0u) << n;
  }
  EXPECT_FALSE(splitClientData(shard, 0, 9, 1).heldOut.has_value());
}

TEST(ClientEvaluation, OnlyWhenTheTaskAsksAndIntoTheReply) {
  const ClientShard shard = numberedShard(40);
  const ClientData local = splitClientData(shard, 0.25, 1, 0);
  models::ModelOptions options;
  options.name = "mlp";
  models::fitModelToData(options, shard.data->spec());
  auto net = models::buildModel(options).net;
  const objective::Objective objective(shard.data->spec(), {});
  MessageHeader task;
  MessageHeader reply;
  evaluateForTask(task, *net, local.heldOut, objective, reply);
  EXPECT_EQ(reply.evalSamples, 0) << "the task did not ask";
  task.evaluate = true;
  evaluateForTask(task, *net, local.heldOut, objective, reply);
  EXPECT_EQ(reply.evalSamples, 10);
  EXPECT_GE(reply.evalAccuracy, 0);
  EXPECT_LE(reply.evalAccuracy, 1);
  EXPECT_GT(reply.evalLoss, 0);
  reply = MessageHeader{};
  evaluateForTask(task, *net, std::nullopt, objective, reply);
  EXPECT_EQ(reply.evalSamples, 0) << "nothing held out";
}

}  // namespace
}  // namespace balancenet::federated
