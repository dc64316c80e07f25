// Federated evaluation on the server: a round's client rows summed up (weighted means, worst, 10th
// percentile), client_eval.csv, summary.json's "federated_evaluation", and which rounds ask for it.
#include "balancenet/federated/FederatedEvaluation.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "balancenet/core/Error.h"
#include "balancenet/federated/RoundLog.h"

namespace balancenet::federated {
namespace {

TEST(FederatedEvaluation, WeightedMeansWorstAndTenthPercentileFromHandMadeRows) {
  // Accuracies 0.9 (90 samples), 0.5 (10), 0.7 (50), 0.8 (50): weighted (81 + 5 + 35 + 40) / 200 = 0.805.
  const std::vector<ClientEvaluationRecord> rows{
      {0, 90, 0.9, 0.2}, {1, 10, 0.5, 1.0}, {2, 50, 0.7, 0.6}, {3, 50, 0.8, 0.4}};
  const auto e = summarizeClientEvaluations(4, rows);
  EXPECT_EQ(e.round, 4);
  EXPECT_EQ(e.samples, 200);
  EXPECT_DOUBLE_EQ(e.accuracy, 0.805);
  EXPECT_DOUBLE_EQ(e.loss, (90 * 0.2 + 10 * 1.0 + 50 * 0.6 + 50 * 0.4) / 200);  // 0.39
  EXPECT_DOUBLE_EQ(e.minAccuracy, 0.5);
  // Sorted 0.5, 0.7, 0.8, 0.9: position 3 x 0.1 = 0.3, so 0.5 + 0.3 x 0.2 = 0.56 (numpy.percentile's).
  EXPECT_DOUBLE_EQ(e.p10Accuracy, 0.56);
  EXPECT_DOUBLE_EQ(percentile({3, 1, 2}, 50), 2);
  EXPECT_DOUBLE_EQ(percentile({4}, 10), 4);
  EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 10), 2);
  EXPECT_THROW(percentile({}, 10), InternalError);
  EXPECT_THROW(summarizeClientEvaluations(0, {}), InternalError);
}

TEST(FederatedEvaluation, CsvRowsAndTheSummaryOfTheLastRoundThatHadThem) {
  std::vector<RoundRecord> rounds(3);
  for (int64_t r = 0; r < 3; ++r) rounds[r].round = r;
  rounds[0].clientEvaluations = {{0, 10, 0.1, 2.0}, {1, 30, 0.3, 1.5}};
  rounds[1].clientEvaluations = {{0, 10, 0.6, 1.0}, {2, 30, 0.2, 3.0}};  // round 2 had none
  EXPECT_EQ(clientEvalCsv(rounds),
            "round,client,samples,accuracy,loss\n0,0,10,0.1,2\n0,1,30,0.3,1.5\n"
            "1,0,10,0.6,1\n1,2,30,0.2,3\n");
  const auto summary = summarise("fedavg", 3, rounds);
  ASSERT_TRUE(summary.federatedEvaluation.has_value());
  const auto j = nlohmann::json::parse(summaryJson(summary))["federated_evaluation"];
  EXPECT_EQ(j["round"], 1);
  EXPECT_EQ(j["clients"], 2);
  EXPECT_EQ(j["samples"], 40);
  EXPECT_DOUBLE_EQ(j["accuracy"].get<double>(), (10 * 0.6 + 30 * 0.2) / 40);
  EXPECT_DOUBLE_EQ(j["loss"].get<double>(), (10 * 1.0 + 30 * 3.0) / 40);
  EXPECT_DOUBLE_EQ(j["min_accuracy"].get<double>(), 0.2);
  EXPECT_DOUBLE_EQ(j["p10_accuracy"].get<double>(), 0.2 + 0.1 * 0.4);
  ASSERT_EQ(j["per_client"].size(), 2u);
  EXPECT_EQ(j["per_client"][1]["client"], 2);
  EXPECT_EQ(j["per_client"][1]["samples"], 30);
  EXPECT_DOUBLE_EQ(j["per_client"][1]["accuracy"].get<double>(), 0.2);
  // No client evaluated: null, and the csv is its header.
  for (auto& r : rounds) r.clientEvaluations.clear();
  EXPECT_TRUE(nlohmann::json::parse(summaryJson(summarise("fedavg", 3, rounds)))["federated_evaluation"].is_null());
  EXPECT_EQ(clientEvalCsv(rounds), "round,client,samples,accuracy,loss\n");
}

TEST(FederatedEvaluation, RoundsThatAskTheClients) {
  FederatedOptions o;
  o.rounds = 10;
  o.clientEvalEvery = 3;
  std::vector<int64_t> asked;
  for (int64_t r = 0; r < o.rounds; ++r)
    if (clientsEvaluate(o, r, false)) asked.push_back(r);
  EXPECT_EQ(asked, (std::vector<int64_t>{0, 3, 6, 9}));  // every third, and the last
  o.clientEvalEvery = 0;
  EXPECT_FALSE(clientsEvaluate(o, 0, false));
  EXPECT_TRUE(clientsEvaluate(o, 9, false));
  EXPECT_FALSE(clientsEvaluate(o, 9, true)) << "asynchronous: never";
  o.clientEvalFraction = 0;
  EXPECT_FALSE(clientsEvaluate(o, 9, false));
}

}  // namespace
}  // namespace balancenet::federated
