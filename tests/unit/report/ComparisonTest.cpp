// Comparison tables: one row per run, the paper's per-100 columns, CSV and JSON forms.
#include <gtest/gtest.h>

#include "balancenet/report/Comparison.h"

namespace balancenet::report {
namespace {

RunResults fake(double sps, double update, std::vector<double> per100, double accuracy) {
  RunResults r;
  r.syncMsPerStep = {50, 6, 7};  // the first step is left out of the mean
  r.bytesSentPerStep = 2048;
  r.summary = {{"samples_per_second", sps},
               {"mean_weight_update_ms", update},
               {"weight_update_ms_per_100", per100},
               {"final_accuracy", accuracy},
               {"effective_global_batch", 128.0},
               {"split", "39,39,39,11"},
               {"evaluations", {{{"step", 100}, {"accuracy", accuracy}, {"train_seconds", 42.0}}}}};
  return r;
}

TEST(Comparison, TableCsvAndJson) {
  Comparison c(
      {{"cnn", "equal", fake(100, 1280, {1200, 1300}, 0.70)}, {"cnn", "balanced", fake(310, 410, {420, 400}, 0.81)}},
      0.8);
  ASSERT_EQ(c.rows().size(), 2u);
  EXPECT_DOUBLE_EQ(c.rows()[1].secondsToTarget, 42.0);
  EXPECT_LT(c.rows()[0].secondsToTarget, 0);  // never reached 80%
  const auto table = c.table();
  EXPECT_NE(table.find("balanced"), std::string::npos);
  EXPECT_NE(table.find("101-200"), std::string::npos);
  EXPECT_NE(table.find("310.0"), std::string::npos);
  const auto csv = c.csv();
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "model,policy,mean_update_ms,samples_per_s,seconds_to_target,final_accuracy,effective_global_batch,"
            "mean_sync_ms,bytes_sent_per_step,update_ms_100_1,update_ms_100_2");
  EXPECT_NE(csv.find("cnn,equal,1280.000,100.00,,0.7000,128.00,6.500,2048,1200.000,1300.000"), std::string::npos)
      << csv;
  auto j = c.json();
  EXPECT_TRUE(j["runs"][0]["seconds_to_target"].is_null());
  EXPECT_DOUBLE_EQ(j["runs"][1]["samples_per_second"].get<double>(), 310);
}

}  // namespace
}  // namespace balancenet::report
