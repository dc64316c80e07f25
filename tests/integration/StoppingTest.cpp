// Ending a run before --steps (`train --stop-at-accuracy`, `--time-budget-s`): every worker stops at the same
// step, the outputs are written as at a normal end, and summary.json says why and when accuracies were reached.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "BinaryFixture.h"
#include "CsvRows.h"

namespace balancenet::testing {
namespace {

class Stopping : public BinaryFixture {
 protected:
  // Each rank's last step in steps.csv.
  std::map<std::string, long long> lastStepPerRank() {
    std::map<std::string, long long> last;
    for (const auto& row : readCsvRows(dir_.file("run/steps.csv")))
      last[row.at("rank")] = std::max(last[row.at("rank")], std::stoll(row.at("step")));
    return last;
  }
  nlohmann::json summary() { return nlohmann::json::parse(readFile(dir_.file("run/summary.json"))); }
};

TEST_F(Stopping, AccuracyTargetEndsEveryWorkerAtTheEvaluationThatReachedIt) {
  const auto r = train({"--model", "cnn", "--width", "0.25", "--nodes", "2", "--global-batch", "32", "--steps", "400",
                        "--lr", "0.05", "--momentum", "0.9", "--eval-every", "2", "--stop-at-accuracy", "0.5"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const auto s = summary();
  const int64_t steps = s.at("steps");
  std::printf("stopped at step %lld of 400 at %.3f accuracy\n", static_cast<long long>(steps),
              s.at("final_accuracy").get<double>());
  EXPECT_LT(steps, 400);
  EXPECT_EQ(steps % 2, 0);  // at an evaluation
  EXPECT_EQ(s.at("stopped_by"), "accuracy");
  EXPECT_GE(s.at("final_accuracy").get<double>(), 0.5);
  ASSERT_TRUE(s.at("time_to_accuracy").at("0.50").is_object()) << s.dump(2);
  EXPECT_EQ(s.at("time_to_accuracy").at("0.50").at("step"), steps);
  // The evaluation that stopped the run is its last, not taken twice.
  EXPECT_EQ(s.at("evaluations").back().at("step"), steps);
  EXPECT_LT(s.at("evaluations").at(s.at("evaluations").size() - 2).at("accuracy").get<double>(), 0.5);
  const auto last = lastStepPerRank();
  ASSERT_EQ(last.size(), 2u);
  EXPECT_EQ(last.at("0"), steps - 1);
  EXPECT_EQ(last.at("1"), steps - 1);
  EXPECT_NE(r.output.find("stopped at step " + std::to_string(steps) + " of 400"), std::string::npos) << r.output;
}

// Issue 56: --eval-samples N evaluates a fixed subset of N test samples (of the fixture's 128), 0 none at all.
TEST_F(Stopping, EvalSamplesEvaluatesThatManyTestSamplesOrNone) {
  const auto r = train({"--model", "mlp", "--nodes", "2", "--global-batch", "16", "--steps", "4", "--eval-every", "2",
                        "--eval-samples", "20"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const auto s = summary();
  EXPECT_EQ(s.at("eval_samples"), 20) << s.dump(2);
  ASSERT_EQ(s.at("evaluations").size(), 2u) << s.dump(2);  // after steps 2 and 4
  for (const auto& e : s.at("evaluations")) EXPECT_EQ(e.at("samples"), 20) << s.dump(2);
  EXPECT_FALSE(s.at("final_accuracy").is_null());
  EXPECT_NE(r.output.find("evaluating 20 of 128 test samples"), std::string::npos) << r.output;

  const auto none = train({"--model", "mlp", "--global-batch", "16", "--steps", "2", "--eval-samples", "0"});
  ASSERT_EQ(none.exitCode, 0) << none.output;
  const auto n = summary();
  EXPECT_EQ(n.at("eval_samples"), 0) << n.dump(2);
  EXPECT_TRUE(n.at("evaluations").empty()) << n.dump(2);
  EXPECT_TRUE(n.at("final_accuracy").is_null()) << n.dump(2);
  EXPECT_EQ(none.output.find("eval at step"), std::string::npos) << none.output;
  EXPECT_NE(none.output.find("no evaluation (--eval-samples 0)"), std::string::npos) << none.output;
}

// --eval-at-start: the untrained model's evaluation first (step 0), on every worker at once (the option travels to
// the launched workers in the job's JSON), then the cadence's; refused where --eval-samples 0 turns evaluation off.
TEST_F(Stopping, EvalAtStartEvaluatesTheModelBeforeTheFirstStep) {
  const auto r = train({"--model", "mlp", "--nodes", "2", "--global-batch", "16", "--steps", "4", "--eval-every", "2",
                        "--eval-at-start", "--lr", "0.05"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const auto s = summary();
  const auto& evals = s.at("evaluations");
  ASSERT_EQ(evals.size(), 3u) << s.dump(2);  // before step 1, after steps 2 and 4
  EXPECT_EQ(evals.at(0).at("step"), 0);
  EXPECT_EQ(evals.at(1).at("step"), 2);
  EXPECT_EQ(evals.at(2).at("step"), 4);
  EXPECT_NE(evals.at(0).at("loss").get<double>(), evals.at(2).at("loss").get<double>()) << s.dump(2);
  EXPECT_NE(r.output.find("eval at step 0:"), std::string::npos) << r.output;

  const auto refused = train({"--model", "mlp", "--steps", "2", "--eval-at-start", "--eval-samples", "0"});
  expectOneLineError(refused, "--eval-at-start evaluates, which --eval-samples 0 turns off", 2);
}

TEST_F(Stopping, TimeBudgetEndsEveryWorkerWithinTheBudgetAndAStep) {
  const double budget = 1.5;
  const auto r = train({"--model", "mlp", "--nodes", "2", "--global-batch", "16", "--steps", "1000000", "--eval-every",
                        "0", "--time-budget-s", "1.5"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const auto s = summary();
  EXPECT_EQ(s.at("stopped_by"), "time_budget");
  EXPECT_LT(s.at("steps").get<int64_t>(), 1000000);
  // Decided one step ahead from the last step's time: the end lies within a step of the budget (two of the
  // slowest, where step times vary).
  double slowestStepS = 0;
  for (const auto& row : readCsvRows(dir_.file("run/steps.csv")))
    slowestStepS = std::max(slowestStepS, std::stod(row.at("update_ms")) / 1000);
  const double trained = s.at("train_seconds");
  std::printf("budget %.1f s: trained %.3f s in %lld steps, slowest step %.3f s\n", budget, trained,
              s.at("steps").get<long long>(), slowestStepS);
  EXPECT_GE(trained, budget - 2 * slowestStepS);
  EXPECT_LE(trained, budget + 2 * slowestStepS);
  const auto last = lastStepPerRank();
  ASSERT_EQ(last.size(), 2u);
  EXPECT_EQ(last.at("0"), s.at("steps").get<long long>() - 1);
  EXPECT_EQ(last.at("1"), last.at("0"));
  EXPECT_TRUE(s.at("final_accuracy").is_number());  // the final evaluation, as at a normal end
}

}  // namespace
}  // namespace balancenet::testing
