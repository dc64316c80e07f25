// The federated processes' pure pieces: the message header codec, the server state's bytes, the local batches.
#include "balancenet/federated/process/UpdateMessage.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <set>

#include "balancenet/core/Error.h"
#include "balancenet/federated/process/LocalTraining.h"
#include "balancenet/federated/process/ServerCheckpoint.h"

namespace balancenet::federated {
namespace {

TEST(UpdateMessage, EveryFieldSurvivesTheRoundTrip) {
  MessageHeader h;
  h.kind = MessageKind::Update;
  h.round = 12345;
  h.version = 9007199254740991;  // 2^53 - 1: the largest count a float64 slot holds exactly
  h.localSteps = 20;
  h.batch = 24;
  h.deadlineS = 2.5;
  h.mu = 0.01;
  h.lr = 0.05;
  h.doneSteps = 7;
  h.samples = 224;
  h.computeSeconds = 1.25;
  h.stoppedEarly = true;
  h.evaluate = true;
  h.evalSamples = 37;
  h.evalAccuracy = 0.8125;
  h.evalLoss = 1.0 / 3;
  h.momentum = 0.9;
  const auto slots = encodeHeader(h);
  EXPECT_EQ(slots[13].item<double>(), 0.9) << "slot 13 is client momentum";
  EXPECT_EQ(slots.numel(), kHeaderSlots);
  EXPECT_EQ(slots.scalar_type(), at::kDouble);
  const auto d = decodeHeader(slots);
  EXPECT_EQ(d.kind, h.kind);
  EXPECT_EQ(d.round, h.round);
  EXPECT_EQ(d.version, h.version);
  EXPECT_EQ(d.localSteps, h.localSteps);
  EXPECT_EQ(d.batch, h.batch);
  EXPECT_EQ(d.deadlineS, h.deadlineS);
  EXPECT_EQ(d.mu, h.mu);
  EXPECT_EQ(d.lr, h.lr);
  EXPECT_EQ(d.doneSteps, h.doneSteps);
  EXPECT_EQ(d.samples, h.samples);
  EXPECT_EQ(d.computeSeconds, h.computeSeconds);
  EXPECT_TRUE(d.stoppedEarly);
  EXPECT_TRUE(d.evaluate);
  EXPECT_EQ(d.evalSamples, 37);
  EXPECT_EQ(d.evalAccuracy, h.evalAccuracy);
  EXPECT_EQ(d.evalLoss, h.evalLoss);
  const auto plain = decodeHeader(encodeHeader(MessageHeader{}));
  EXPECT_EQ(plain.kind, MessageKind::Task);
  EXPECT_FALSE(plain.evaluate);
  EXPECT_EQ(d.momentum, 0.9);
}

TEST(UpdateMessage, ForeignOrDamagedHeadersAreRefused) {
  auto good = encodeHeader(MessageHeader{});
  EXPECT_THROW(decodeHeader(at::zeros({kHeaderSlots}, at::kDouble)), RuntimeFailure) << "no protocol mark";
  EXPECT_THROW(decodeHeader(at::zeros({kHeaderSlots - 1}, at::kDouble)), RuntimeFailure) << "short";
  EXPECT_THROW(decodeHeader(good.to(at::kFloat)), RuntimeFailure) << "float32";
  auto badKind = good.clone();
  badKind[1] = 7;
  EXPECT_THROW(decodeHeader(badKind), RuntimeFailure);
  auto fractionalRound = good.clone();
  fractionalRound[2] = 1.5;
  EXPECT_THROW(decodeHeader(fractionalRound), RuntimeFailure);
  auto negativeSteps = good.clone();
  negativeSteps[3] = -1;
  EXPECT_THROW(decodeHeader(negativeSteps), RuntimeFailure);
}

TEST(ServerStateBytes, RoundTripIsExact) {
  ServerState s;
  s.round = 6;
  s.version = 5;
  s.global = at::randn({1000}, at::kFloat);
  s.samplesPerSecond = {0, 12.5, 1.0 / 3};
  s.wallSeconds = 12.75;
  s.tasksInFlight = 3;  // fedbuff's tasks out at the checkpoint: a resume loses and counts them
  s.tasksLostOnResume = 2;
  RoundRecord r;
  r.round = 5;
  r.wallSeconds = 1.0 / 7;
  r.testAccuracy = 0.8125;
  r.downloadBytes = 4000;
  r.clients.push_back({2, 10, 4, 128, 4096, 0.5, 0.25, 3, "late"});
  r.clientEvaluations = {{0, 12, 0.75, 0.5}, {2, 7, 1.0 / 3, 2.25}};
  s.records = {r, RoundRecord{}};
  const auto d = decodeServerState(encodeServerState(s));
  EXPECT_EQ(d.round, 6);
  EXPECT_EQ(d.version, 5);
  EXPECT_TRUE(at::equal(d.global, s.global));
  EXPECT_EQ(d.samplesPerSecond, s.samplesPerSecond);
  EXPECT_EQ(d.wallSeconds, 12.75);
  EXPECT_EQ(d.tasksInFlight, 3);
  EXPECT_EQ(d.tasksLostOnResume, 2);
  ASSERT_EQ(d.records.size(), 2u);
  EXPECT_EQ(d.records[0].wallSeconds, r.wallSeconds);
  EXPECT_EQ(d.records[0].testAccuracy, r.testAccuracy);
  EXPECT_FALSE(d.records[1].testAccuracy.has_value());
  ASSERT_EQ(d.records[0].clients.size(), 1u);
  EXPECT_EQ(d.records[0].clients[0].status, "late");
  EXPECT_EQ(d.records[0].clients[0].staleness, 3);
  EXPECT_EQ(d.records[0].clients[0].doneSteps, 4);
  // Federated evaluation's rows survive a resume, exactly.
  ASSERT_EQ(d.records[0].clientEvaluations.size(), 2u);
  EXPECT_EQ(d.records[0].clientEvaluations[1].client, 2);
  EXPECT_EQ(d.records[0].clientEvaluations[1].samples, 7);
  EXPECT_EQ(d.records[0].clientEvaluations[1].accuracy, 1.0 / 3);
  EXPECT_EQ(d.records[0].clientEvaluations[1].loss, 2.25);
  EXPECT_TRUE(d.records[1].clientEvaluations.empty());
  auto bytes = encodeServerState(s);
  EXPECT_THROW(decodeServerState(bytes.substr(0, bytes.size() - 1)), RuntimeFailure);
  EXPECT_THROW(decodeServerState("xy"), RuntimeFailure);
}

TEST(LocalBatches, FollowSeedRoundAndClientAndCoverTheShardBeforeRepeating) {
  auto draw = [](uint64_t seed, int64_t round, int client) {
    LocalBatches b(seed, round, 4, client, 10, 4);
    std::vector<int64_t> all;
    for (int i = 0; i < 2; ++i)
      for (auto x : b.next()) all.push_back(x);
    return all;
  };
  EXPECT_EQ(draw(1, 3, 2), draw(1, 3, 2));
  EXPECT_NE(draw(1, 3, 2), draw(1, 4, 2));
  EXPECT_NE(draw(1, 3, 2), draw(1, 3, 1));
  EXPECT_NE(draw(1, 3, 2), draw(2, 3, 2));
  const auto two = draw(1, 3, 2);  // 8 of 10 positions: one pass, no repeats
  EXPECT_EQ(std::set<int64_t>(two.begin(), two.end()).size(), 8u);
  for (auto x : two) EXPECT_TRUE(x >= 0 && x < 10);
  LocalBatches small(1, 0, 1, 0, 3, 32);
  EXPECT_EQ(small.next().size(), 3u) << "a batch is at most the shard";
}

TEST(LocalBatches, DrawsCarryAugmentationSeedsThatFollowTheRunAndThePass) {
  auto draws = [](uint64_t seed, int client) {
    LocalBatches b(seed, 2, 4, client, 4, 4);  // one batch = one pass over the shard
    auto first = b.nextDraws();
    auto second = b.nextDraws();
    first.insert(first.end(), second.begin(), second.end());
    return first;
  };
  const auto a = draws(1, 0), again = draws(1, 0), other = draws(1, 1);
  ASSERT_EQ(a.size(), 8u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].index, again[i].index);
    EXPECT_EQ(a[i].augmentSeed, again[i].augmentSeed);
  }
  // The same sample in the next pass is augmented differently, and so is another client's.
  for (size_t i = 0; i < 4; ++i)
    for (size_t j = 4; j < 8; ++j)
      if (a[i].index == a[j].index) EXPECT_NE(a[i].augmentSeed, a[j].augmentSeed);
  EXPECT_NE(a[0].augmentSeed, other[0].augmentSeed);
}

}  // namespace
}  // namespace balancenet::federated
