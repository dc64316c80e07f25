#include "balancenet/federated/RoundLog.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "balancenet/core/Error.h"

namespace balancenet::federated {
namespace {

ClientRoundRecord client(int id, int64_t bytes, double computeSeconds, std::string status = "ok") {
  ClientRoundRecord c;
  c.client = id;
  c.assignedSteps = 10;
  c.doneSteps = status == "ok" ? 10 : 4;
  c.samples = c.doneSteps * 32;
  c.uploadBytes = bytes;
  c.seconds = computeSeconds + 0.5;
  c.computeSeconds = computeSeconds;
  c.status = std::move(status);
  return c;
}

// Two clients, four rounds of 10 s; evaluated after rounds 0, 2 and 3 (0.5, 0.82, 0.86).
std::vector<RoundRecord> fourRounds() {
  std::vector<RoundRecord> rounds;
  const std::optional<double> accuracy[] = {0.5, std::nullopt, 0.82, 0.86};
  for (int64_t r = 0; r < 4; ++r) {
    RoundRecord rec;
    rec.round = r;
    rec.wallSeconds = 10.0 * double(r + 1);
    rec.roundSeconds = 10;
    rec.testAccuracy = accuracy[r];
    if (accuracy[r]) rec.testLoss = 1 - *accuracy[r];
    rec.downloadBytes = 200;
    rec.clients = {client(0, 100, 8), client(1, 100, 2, r == 1 ? "late" : "ok")};
    rounds.push_back(rec);
  }
  return rounds;
}

TEST(RoundLogTest, SummaryOfHandMadeRounds) {
  const auto s = summarise("balanced", 2, fourRounds());
  EXPECT_EQ(s.strategy, "balanced");
  EXPECT_EQ(s.clients, 2);
  EXPECT_EQ(s.rounds, 4);
  EXPECT_EQ(s.wallSeconds, 40);
  EXPECT_EQ(s.finalAccuracy, 0.86);
  ASSERT_EQ(s.timeToAccuracy.size(), 3u);
  EXPECT_EQ(s.timeToAccuracy.at(0.70), std::make_pair(30.0, int64_t{2}));
  EXPECT_EQ(s.timeToAccuracy.at(0.80), std::make_pair(30.0, int64_t{2}));
  EXPECT_EQ(s.timeToAccuracy.at(0.85), std::make_pair(40.0, int64_t{3}));
  EXPECT_EQ(s.uploadBytes, 800);
  EXPECT_EQ(s.downloadBytes, 800);
  // 4 rounds x (8 + 2) compute seconds over 2 clients x 40 s.
  EXPECT_DOUBLE_EQ(s.clientIdleFraction, 1 - 40.0 / 80.0);
}

TEST(RoundLogTest, TargetsNeverReachedAreAbsentAndNoRoundsIsAllZero) {
  auto rounds = fourRounds();
  rounds.resize(1);
  const auto s = summarise("fedavg", 2, rounds);
  EXPECT_TRUE(s.timeToAccuracy.empty());
  EXPECT_EQ(s.finalAccuracy, 0.5);
  const auto none = summarise("fedavg", 2, {});
  EXPECT_EQ(none.rounds, 0);
  EXPECT_EQ(none.wallSeconds, 0);
  EXPECT_EQ(none.clientIdleFraction, 0);
}

TEST(RoundLogTest, RoundsCsvHasOneRowPerRoundAndClient) {
  auto rounds = fourRounds();
  rounds.resize(2);
  EXPECT_EQ(roundsCsv(rounds),
            "round,wall_s,round_s,test_accuracy,test_loss,client,assigned_steps,done_steps,samples,upload_bytes,"
            "seconds,compute_s,staleness,status\n"
            "0,10,10,0.5,0.5,0,10,10,320,100,8.5,8,0,ok\n"
            "0,10,10,0.5,0.5,1,10,10,320,100,2.5,2,0,ok\n"
            "1,20,10,,,0,10,10,320,100,8.5,8,0,ok\n"
            "1,20,10,,,1,10,4,128,100,2.5,2,0,late\n");
}

TEST(RoundLogTest, SummaryJsonHasTheFieldsAndTheExtraSettings) {
  auto rounds = fourRounds();
  rounds.resize(3);
  const auto j = nlohmann::json::parse(
      summaryJson(summarise("fednova", 2, rounds), R"({"alpha": 0.1, "strategy": "not this one"})"));
  EXPECT_EQ(j.at("kind"), "federated");
  EXPECT_EQ(j.at("strategy"), "fednova");  // the summary's own field wins over extra's
  EXPECT_EQ(j.at("alpha"), 0.1);
  EXPECT_EQ(j.at("clients"), 2);
  EXPECT_EQ(j.at("rounds"), 3);
  EXPECT_EQ(j.at("wall_seconds"), 30.0);
  EXPECT_EQ(j.at("final_accuracy"), 0.82);
  EXPECT_EQ(j.at("time_to_accuracy").at("0.70"), (nlohmann::json{{"seconds", 30.0}, {"round", 2}}));
  EXPECT_EQ(j.at("time_to_accuracy").at("0.80"), (nlohmann::json{{"seconds", 30.0}, {"round", 2}}));
  EXPECT_TRUE(j.at("time_to_accuracy").at("0.85").is_null());
  EXPECT_EQ(j.at("upload_bytes"), 600);
  EXPECT_EQ(j.at("download_bytes"), 600);
  EXPECT_DOUBLE_EQ(j.at("client_idle_fraction").get<double>(), 0.5);
}

TEST(RoundLogTest, ExtraSettingsMustBeAJsonObject) {
  const auto s = summarise("fedavg", 2, fourRounds());
  EXPECT_THROW(summaryJson(s, "[1, 2]"), InternalError);
  EXPECT_THROW(summaryJson(s, "{oops"), InternalError);
}

}  // namespace
}  // namespace balancenet::federated
