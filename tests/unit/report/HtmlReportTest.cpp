// The report page: tables for every run, per-rank bars, escaped text, charts inline.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "PipelineFixture.h"
#include "balancenet/report/HtmlReport.h"
#include "testing/HtmlPages.h"
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

TEST(HtmlReport, TokenAndRegressionRunsSayTokensPerSecondPerplexityAndMse) {
  testing::TempDir charts;
  auto text = fakeRun("runs/text", "16,16");
  text.summary["model"] = "gpt";
  text.summary["tokens_per_second"] = 24625.4;
  text.summary["final_perplexity"] = 22.3547;
  text.summary["final_bits_per_byte"] = 4.4826;
  auto regression = fakeRun("runs/npy", "16,16");
  regression.summary["final_mse"] = 0.0123;
  const auto page = htmlReport({text, regression}, charts.path());
  EXPECT_NE(page.find("<td>24625 tokens/s</td>"), std::string::npos);
  EXPECT_NE(page.find("<td>perplexity 22.355, 4.483 bits/byte</td>"), std::string::npos);
  EXPECT_NE(page.find("<td>mse 0.0123</td>"), std::string::npos);
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
  EXPECT_EQ(testing::embeddedImages(page), 4u);
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

TEST(HtmlReport, APipelinedRunShowsItsScheduleAndBubble) {
  testing::TempDir charts, runDir;
  fixture::writeText(runDir.file("pipeline.csv"), fixture::kGpipeCsv);
  auto run = fakeRun("runs/p", "32,32");
  run.pipeline = readPipelineCsv(runDir.file("pipeline.csv"));
  run.summary["schedule"] = "gpipe";
  const auto page = htmlReport({run, fakeRun("runs/dp", "32,32")}, charts.path());
  EXPECT_NE(page.find("<h2>Pipeline schedule</h2>"), std::string::npos);
  EXPECT_NE(page.find("<h3>p (cnn)</h3>"), std::string::npos);
  EXPECT_EQ(page.find("<h3>dp (cnn)</h3>\n<p>Step"), std::string::npos);  // no pipeline, no section of its own
  EXPECT_NE(page.find("Step 5 (12.0 ms from the first action to the last): bubble fraction rank 0 25.0% (9.0 ms "
                      "busy), rank 1 25.0% (9.0 ms busy); mean 25.0% (equal stages would leave (S-1)/(M+S-1) = "
                      "25.0% with S = 2, M = 3)"),
            std::string::npos);
  EXPECT_NE(page.find("alt=\"p (cnn): pipeline schedule\""), std::string::npos);
  EXPECT_EQ(testing::embeddedImages(page), 5u);  // throughput, update, two split charts and the pipeline
  EXPECT_EQ(htmlReport({fakeRun("runs/dp", "32,32")}, charts.path()).find("Pipeline schedule"), std::string::npos);
}

TEST(HtmlReport, PeakMemoryOfTheLargestWorkerOrADashForOlderRuns) {
  testing::TempDir charts;
  auto run = fakeRun("runs/a", "40,24");
  run.peakMemoryMb = {512.4, 730.6};
  const auto page = htmlReport({run, fakeRun("runs/old", "40,24")}, charts.path());
  EXPECT_NE(page.find("<th>peak memory, largest worker (MB)</th>"), std::string::npos);
  EXPECT_NE(page.find("<td>40,24</td><td>731</td>"), std::string::npos);
  EXPECT_NE(page.find("<td>40,24</td><td>-</td>"), std::string::npos);
}

// `balancenet report RUN_DIR` on a pipelined run: the page, and the picture kept beside pipeline.csv.
TEST(HtmlReport, WritesThePageAndKeepsPipelinePngInTheRunDirectory) {
  testing::TempDir run, out;
  fixture::writeText(run.file("summary.json"), R"({"model": "mlp", "nodes": 2, "peak_memory_mb": [300, 310]})");
  fixture::writeText(run.file("steps.csv"),
                     "step,rank,batch,compute_ms,comm_ms,wait_ms,sync_ms,update_ms,loss,lr,bytes_sent,bytes_received\n"
                     "0,0,8,1,1,0,1,10,1,0.1,4,4\n0,1,8,1,1,0,1,10,1,0.1,4,4\n");
  fixture::writeText(run.file("pipeline.csv"), fixture::kGpipeCsv);
  writeHtmlReport({run.path()}, out.file("report.html"));
  std::ifstream in(out.file("report.html"));
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("<h2>Pipeline schedule</h2>"), std::string::npos);
  EXPECT_NE(page.find("<td>310</td>"), std::string::npos);
  ASSERT_TRUE(std::filesystem::exists(run.file("pipeline.png"))) << "gnuplot (Debian's gnuplot-nox) is required";
  EXPECT_GT(std::filesystem::file_size(run.file("pipeline.png")), 1000u);
}

}  // namespace
}  // namespace balancenet::report
