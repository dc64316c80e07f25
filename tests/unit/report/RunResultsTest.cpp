// Reading run directories back: the slowest rank per step, the split changes, time to accuracy.
#include <gtest/gtest.h>

#include <fstream>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/metrics/RunSummary.h"
#include "balancenet/report/GnuplotChart.h"
#include "balancenet/report/RunCharts.h"
#include "balancenet/report/RunResults.h"
#include "testing/TempDir.h"

namespace balancenet::report {
namespace {

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

void writeRun(const testing::TempDir& dir) {
  write(dir.file("summary.json"),
        R"({"samples_per_second": 300.0, "evaluations": [{"step": 10, "accuracy": 0.5, "train_seconds": 4.0},
            {"step": 20, "accuracy": 0.82, "train_seconds": 8.5}, {"step": 30, "accuracy": 0.85, "train_seconds": 12.0}]})");
  write(dir.file("steps.csv"),
        "step,rank,batch,compute_ms,comm_ms,wait_ms,sync_ms,update_ms,loss,lr,bytes_sent,bytes_received\n"
        "0,0,60,1,1,0,1,100.5,1,0.1,4,4\n0,1,4,1,1,0,1,90,1,0.1,4,4\n1,0,60,1,1,0,3,50,1,0.1,4,4\n1,1,4,1,1,0,5,70,1,0."
        "1,8,4\n");
  write(dir.file("splits.csv"),
        "step,policy,rank,batch,compute_ms,wait_ms,ops_per_s,memory_mb,mean_latency_ms,bandwidth_mbps,note\n"
        "0,balanced,0,32,0,0,0,0,0,0,initial split\n0,balanced,1,32,0,0,0,0,0,0,initial split\n"
        "5,balanced,0,60,1,1,1,1,1,1,x\n5,balanced,1,4,1,1,1,1,1,1,x\n");
}

TEST(RunResults, TimeToAccuracyComesFromTheSummarysOwnTableWhereItHasTheTarget) {
  RunResults run;
  run.summary = nlohmann::json::parse(
      R"({"time_to_accuracy": {"0.80": {"seconds": 7.25, "step": 18}, "0.85": null},
          "evaluations": [{"step": 20, "accuracy": 0.9, "train_seconds": 8.5}]})");
  EXPECT_DOUBLE_EQ(run.secondsToAccuracy(0.8), 7.25);  // the table, not the evaluations' 8.5
  EXPECT_DOUBLE_EQ(run.secondsToAccuracy(0.85), -1);   // null: the run says it never reached it
  EXPECT_DOUBLE_EQ(run.secondsToAccuracy(0.9), 8.5);   // not in the table: the evaluations
}

TEST(RunResults, LoadsSlowestRankPerStepSyncBytesAndSplitChanges) {
  testing::TempDir dir;
  writeRun(dir);
  auto run = loadRun(dir.path());
  EXPECT_EQ(run.updateMsPerStep, (std::vector<double>{100.5, 70}));
  ASSERT_EQ(run.splits.size(), 2u);
  EXPECT_EQ(run.splits[1].step, 5);
  EXPECT_EQ(run.splits[1].batches, (std::vector<int64_t>{60, 4}));
  EXPECT_DOUBLE_EQ(run.secondsToAccuracy(0.8), 8.5);
  EXPECT_DOUBLE_EQ(run.secondsToAccuracy(0.9), -1);
  EXPECT_EQ(run.syncMsPerStep, (std::vector<double>{1, 4}));  // mean over ranks
  EXPECT_DOUBLE_EQ(run.meanSyncMs(), 4);                      // step 0 left out
  EXPECT_DOUBLE_EQ(run.bytesSentPerStep, 5);
  EXPECT_EQ(run.samplesPerStep, (std::vector<double>{64, 64}));
  ASSERT_EQ(run.ranks.size(), 2u);  // step 1 only: rank 1 computed 1 ms, waited 0
  EXPECT_EQ(run.ranks[1].rank, 1);
  EXPECT_DOUBLE_EQ(run.ranks[1].computeMs, 1);
  EXPECT_DOUBLE_EQ(run.ranks[1].waitMs, 0);
}

// A run whose steps.csv has the columns written since pipelines (issue 16), stage among them; each row is
// (step, rank, batch, update_ms, stage), the stage field as written ("" for an empty one).
struct StepsRow {
  int step, rank, batch;
  double updateMs;
  std::string stage;
};

RunResults loadSteps(const testing::TempDir& dir, const std::vector<StepsRow>& rows) {
  writeRun(dir);
  std::string csv =
      "step,rank,batch,compute_ms,comm_ms,wait_ms,sync_ms,update_ms,loss,lr,bytes_sent,bytes_received,"
      "stage,micro_batches,bubble_ms,send_ms,recv_ms\n";
  for (const auto& r : rows)
    csv += fmt::format("{},{},{},1,1,0,1,{},1,0.1,4,4,{},4,0,0,0\n", r.step, r.rank, r.batch, r.updateMs, r.stage);
  write(dir.file("steps.csv"), csv);
  return loadRun(dir.path());
}

TEST(RunResults, APipelineStepsSamplesAreCountedOnceAtStageZero) {
  testing::TempDir dir;
  // 2 stages x 2 replicas: ranks 0 and 1 are stage 0's replicas (24 + 40 = the global batch of 64), ranks 2
  // and 3 stage 1's, which process the same 64 samples again. Summing every row would report 128.
  const auto run = loadSteps(dir, {{0, 0, 24, 100, "0"},
                                   {0, 1, 40, 100, "0"},
                                   {0, 2, 24, 100, "1"},
                                   {0, 3, 40, 100, "1"},
                                   {1, 0, 32, 50, "0"},
                                   {1, 1, 32, 50, "0"},
                                   {1, 2, 32, 50, "1"},
                                   {1, 3, 32, 50, "1"}});
  EXPECT_EQ(run.samplesPerStep, (std::vector<double>{64, 64}));
  EXPECT_EQ(run.updateMsPerStep, (std::vector<double>{100, 50}));
  ASSERT_EQ(run.ranks.size(), 4u);  // every stage's rank still has its breakdown
}

TEST(RunResults, ADataParallelRunsRowsAllSayStageZeroAndAllCount) {
  testing::TempDir dir;
  const auto run = loadSteps(dir, {{0, 0, 60, 100, "0"}, {0, 1, 4, 90, "0"}, {1, 0, 30, 50, "0"}, {1, 1, 34, 70, ""}});
  EXPECT_EQ(run.samplesPerStep, (std::vector<double>{64, 64}));  // an empty stage field is stage 0
}

// Runs before issue 30 have no CPU-quota columns (LoadsSlowestRank... reads one with even fewer): zeros.
TEST(RunResults, TheCpuQuotaColumnsAreMeanPerRankAndZeroWhereARunHasNone) {
  testing::TempDir old;
  const auto before = loadSteps(old, {{0, 0, 32, 100, "0"}, {1, 0, 32, 50, "0"}});
  ASSERT_EQ(before.ranks.size(), 1u);
  EXPECT_DOUBLE_EQ(before.ranks[0].throttledMs, 0);
  EXPECT_DOUBLE_EQ(before.ranks[0].commPhases, 0);

  testing::TempDir dir;
  writeRun(dir);
  write(dir.file("steps.csv"),
        "step,rank,batch,compute_ms,comm_ms,wait_ms,sync_ms,update_ms,loss,lr,bytes_sent,bytes_received,stage,"
        "micro_batches,bubble_ms,send_ms,recv_ms,data_ms,throttled_periods,throttled_ms,sync_cpu_ms,comm_phases\n"
        "0,0,32,1,1,0,1,100,1,0.1,4,4,0,1,0,0,0,0,99,999,99,4\n"  // step 0 (set-up) is left out
        "1,0,32,1,1,0,1,50,1,0.1,4,4,0,1,0,0,0,0,3,12.5,2,4\n"
        "2,0,32,1,1,0,1,50,1,0.1,4,4,0,1,0,0,0,0,5,17.5,4,4\n");
  const auto run = loadRun(dir.path());
  ASSERT_EQ(run.ranks.size(), 1u);
  EXPECT_DOUBLE_EQ(run.ranks[0].throttledPeriods, 4);
  EXPECT_DOUBLE_EQ(run.ranks[0].throttledMs, 15);
  EXPECT_DOUBLE_EQ(run.ranks[0].syncCpuMs, 3);
  EXPECT_DOUBLE_EQ(run.ranks[0].commPhases, 4);
}

TEST(RunCharts, ASplitChartSpansAnElasticGroupThatShrank) {
  RunResults run;
  run.splits = {{0, {10, 10, 10}}, {15, {15, 15}}};  // splits.csv's membership change: 3 -> 2 workers
  run.updateMsPerStep.assign(20, 1.0);
  const auto chart = splitChart(run, "t");
  ASSERT_EQ(chart.series.size(), 3u);
  using Points = std::vector<std::pair<double, double>>;
  EXPECT_EQ(chart.series[0].points, (Points{{0, 10}, {15, 15}, {20, 15}}));
  EXPECT_EQ(chart.series[2].points, (Points{{0, 10}, {15, 0}, {20, 0}}));  // no rank 2 after the re-form
}

TEST(RunResults, PeakMemoryRoundTripsAndOlderRunsHaveNone) {
  testing::TempDir dir;
  writeRun(dir);  // a summary.json written before peak memory was recorded
  EXPECT_TRUE(loadRun(dir.path()).peakMemoryMb.empty());
  metrics::RunSummary summary;
  summary.peakMemoryMb = {256.5, 301.0};
  write(dir.file("summary.json"), summary.toJson().dump());
  EXPECT_EQ(loadRun(dir.path()).peakMemoryMb, (std::vector<double>{256.5, 301.0}));
  write(dir.file("summary.json"), R"({"peak_memory_mb": "lots"})");
  EXPECT_THROW(loadRun(dir.path()), UsageError);
}

TEST(RunResults, PipelineCsvIsReadWhenPresentAndAMalformedOneIsAUsageError) {
  testing::TempDir dir;
  writeRun(dir);
  EXPECT_TRUE(loadRun(dir.path()).pipeline.empty());
  write(dir.file("pipeline.csv"), "step,rank,stage,replica,kind,micro,start_ms,end_ms\n3,1,1,0,B,2,10,12.5\n");
  const auto run = loadRun(dir.path());
  ASSERT_EQ(run.pipeline.size(), 1u);
  EXPECT_DOUBLE_EQ(run.pipeline[0].endMs, 12.5);
  write(dir.file("pipeline.csv"), "step,rank\n");
  EXPECT_THROW(loadRun(dir.path()), UsageError);
}

TEST(RunResults, MissingOrMalformedRunIsAUsageError) {
  testing::TempDir dir;
  EXPECT_THROW(loadRun(dir.path()), UsageError);
  write(dir.file("summary.json"), "{not json");
  EXPECT_THROW(loadRun(dir.path()), UsageError);
}

TEST(GnuplotChart, MovingBlocksAverageEachWindow) {
  auto blocks = movingBlocks({1, 3, 5, 7, 9}, 2);
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_DOUBLE_EQ(blocks[0].second, 2);
  EXPECT_DOUBLE_EQ(blocks[1].second, 6);
  EXPECT_DOUBLE_EQ(blocks[2].second, 9);
  EXPECT_DOUBLE_EQ(blocks[0].first, 1.5);
}

TEST(GnuplotChart, RendersAPng) {
  testing::TempDir dir;
  Chart chart{"t", "x", "y", {{"a", {{1, 2}, {2, 3}}}, {"b", {{1, 1}, {2, 1}}, true}}};
  ASSERT_TRUE(renderChart(chart, dir.file("c.png"))) << "gnuplot (Debian's gnuplot-nox) is required";
  std::ifstream png(dir.file("c.png"), std::ios::binary);
  char magic[4] = {};
  png.read(magic, 4);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
}

}  // namespace
}  // namespace balancenet::report

namespace balancenet::report {
namespace {

// steps.csv's noise_scale (issue 32): rank 0's cell per step, empty before it was known; the chart puts B and
// the noise scale side by side, and a run that did not measure it has no such chart.
TEST(RunCharts, TheBatchChartShowsBBesideTheNoiseScaleWhereTheRunMeasuredIt) {
  testing::TempDir dir;
  writeRun(dir);
  write(dir.file("steps.csv"),
        "step,rank,batch,compute_ms,comm_ms,wait_ms,sync_ms,update_ms,loss,lr,bytes_sent,bytes_received,stage,"
        "micro_batches,bubble_ms,send_ms,recv_ms,data_ms,throttled_periods,throttled_ms,sync_cpu_ms,comm_phases,"
        "grad_sq_local,grad_sq,noise_scale\n"
        "0,0,8,1,1,0,1,50,1,0.1,4,4,0,1,0,0,0,0,0,0,0,4,,,\n"
        "0,1,8,1,1,0,1,50,1,0.1,4,4,0,1,0,0,0,0,0,0,0,4,,,\n"
        "1,0,30,1,1,0,1,50,1,0.1,4,4,0,1,0,0,0,0,0,0,0,4,2,1,40\n"
        "1,1,34,1,1,0,1,50,1,0.1,4,4,0,1,0,0,0,0,0,0,0,4,2,1,40\n");
  const auto run = loadRun(dir.path());
  EXPECT_EQ(run.samplesPerStep, (std::vector<double>{16, 64}));
  EXPECT_EQ(run.noiseScalePerStep, (std::vector<double>{-1, 40}));
  const auto chart = batchChart(run, "t");
  ASSERT_EQ(chart.series.size(), 2u);
  using Points = std::vector<std::pair<double, double>>;
  EXPECT_EQ(chart.series[0].points, (Points{{0, 16}, {1, 64}}));
  EXPECT_EQ(chart.series[1].points, (Points{{1, 40}}));

  testing::TempDir plain;
  writeRun(plain);
  EXPECT_TRUE(batchChart(loadRun(plain.path()), "t").series.empty());
}

}  // namespace
}  // namespace balancenet::report
