// The report page: tables for every run, per-rank bars, escaped text, charts inline.
#include <gtest/gtest.h>

#include "balancenet/report/HtmlReport.h"
#include "testing/TempDir.h"

namespace balancenet::report {
namespace {

RunResults fakeRun(const std::string& dir, const std::string& split) {
  RunResults r;
  r.dir = dir;
  r.summary = {{"model", "cnn"},
               {"nodes", 2},
               {"steps", 20},
               {"samples_per_second", 321.5},
               {"mean_weight_update_ms", 99.0},
               {"weight_update_ms_per_100", {99.0}},
               {"final_accuracy", 0.8125},
               {"split", split}};
  r.updateMsPerStep.assign(20, 99.0);
  r.samplesPerStep.assign(20, 64.0);
  r.syncMsPerStep.assign(20, 5.0);
  r.ranks = {{0, 80.0, 4.0, 1.0}, {1, 60.0, 4.0, 21.0}};
  r.splits = {{0, {32, 32}}, {5, {40, 24}}};
  return r;
}

TEST(HtmlReport, TablesBarsAndInlineCharts) {
  testing::TempDir charts;
  const auto page = htmlReport({fakeRun("runs/a", "40,24"), fakeRun("runs/b", "<b>")}, charts.path());
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("<td>a (cnn)</td>"), std::string::npos);
  EXPECT_NE(page.find("<td>321.5</td>"), std::string::npos);
  EXPECT_NE(page.find("<td>81.25%</td>"), std::string::npos);
  EXPECT_NE(page.find("<th>1-100</th>"), std::string::npos);
  EXPECT_NE(page.find("<td>1</td><td>60.0</td><td>4.0</td><td>21.0</td>"), std::string::npos);  // rank 1
  EXPECT_NE(page.find("class=\"wait\" style=\"width:24.7%\""), std::string::npos);              // 21 of 85 ms (longest)
  EXPECT_NE(page.find("&lt;b&gt;"), std::string::npos);                                         // text is escaped
  EXPECT_EQ(page.find("<td><b></td>"), std::string::npos);
  // Throughput, update time and one split chart per run, all inline (gnuplot is a dependency).
  size_t images = 0;
  for (size_t pos = 0; (pos = page.find("data:image/png;base64,", pos)) != std::string::npos; ++pos) ++images;
  EXPECT_EQ(images, 4u);
}

TEST(HtmlReport, EachRankShowsItsFractionOfTheSgemmPeak) {
  testing::TempDir charts;
  auto run = fakeRun("runs/a", "40,24");
  run.summary["workers"] = {{{"rank", 0}, {"achieved_gflops", 61.94}, {"fraction_of_peak", 0.651}},
                            {{"rank", 1}, {"achieved_gflops", 40.0}, {"fraction_of_peak", 0.42}}};
  auto old = fakeRun("runs/b", "40,24");  // written before summary.json had "workers"
  const auto page = htmlReport({run, old}, charts.path());
  EXPECT_NE(page.find("<th>of sgemm peak</th>"), std::string::npos);
  EXPECT_NE(page.find("<td>21.0</td><td>40.0</td><td>0.42</td>"), std::string::npos);  // rank 1, its own entry
  EXPECT_NE(page.find("<td>1.0</td><td>61.9</td><td>0.65</td>"), std::string::npos);   // rank 0
  EXPECT_NE(page.find("<td>21.0</td><td>-</td><td>-</td>"), std::string::npos);        // the old run
}

}  // namespace
}  // namespace balancenet::report
