// Derived step metrics: comm vs wait, the paper's per-100 averages, the CSV layout.
#include <gtest/gtest.h>

#include "balancenet/metrics/RunSummary.h"
#include "balancenet/metrics/StepTable.h"

namespace balancenet::metrics {
namespace {

StepRecord rec(int64_t step, int rank, double sync, double update) {
  StepRecord r;
  r.step = step;
  r.rank = rank;
  r.batch = 10 + rank;
  r.syncMs = sync;
  r.updateMs = update;
  return r;
}

TEST(StepTable, SplitsSyncIntoCommunicationAndWaiting) {
  // Rank 1 arrived last: it waited for nobody, so its 2 ms are the transfer; rank 0 waited 30 ms.
  StepTable t({rec(0, 1, 2, 50), rec(0, 0, 32, 51)});
  EXPECT_DOUBLE_EQ(t.commMs(0), 2);
  EXPECT_DOUBLE_EQ(t.waitMs(t.records()[0]), 30);
  EXPECT_DOUBLE_EQ(t.waitMs(t.records()[1]), 0);
  EXPECT_EQ(t.records()[0].rank, 0);  // sorted by step, then rank
  EXPECT_EQ(t.totalSamples(), 21);
}

TEST(StepTable, MeanAndPerBlockUseTheSlowestRank) {
  std::vector<StepRecord> rs;
  for (int s = 0; s < 250; ++s) {
    rs.push_back(rec(s, 0, 1, s < 100 ? 10 : 20));
    rs.push_back(rec(s, 1, 1, 5));
  }
  StepTable t(rs);
  auto blocks = t.updateMsPerBlock(100);
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_DOUBLE_EQ(blocks[0], 10);
  EXPECT_DOUBLE_EQ(blocks[1], 20);
  EXPECT_DOUBLE_EQ(blocks[2], 20);  // the partial last block averages its 50 steps
  EXPECT_DOUBLE_EQ(t.meanUpdateMs(), (100 * 10 + 150 * 20) / 250.0);
}

TEST(StepTable, CsvHasHeaderAndOneRowPerStepAndRank) {
  StepTable t({rec(0, 0, 1, 2), rec(0, 1, 1, 2), rec(1, 0, 1, 2), rec(1, 1, 1, 2)});
  auto csv = t.toCsv();
  EXPECT_EQ(
      csv.rfind("step,rank,batch,compute_ms,comm_ms,wait_ms,sync_ms,update_ms,loss,lr,bytes_sent,bytes_received,"
                "stage,micro_batches,bubble_ms,send_ms,recv_ms,data_ms,throttled_periods,throttled_ms,sync_cpu_ms,"
                "comm_phases,grad_sq_local,grad_sq,noise_scale,loss_scale,skipped,own_ms\n",
                0),
      0u);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5);
  EXPECT_NE(csv.find("\n1,1,11,"), std::string::npos);
}

TEST(StepTable, PipelineSamplesAreCountedOnceAtStageZero) {
  auto at = [](int rank, int stage) {
    StepRecord r = rec(0, rank, 1, 2);
    r.batch = 64;
    r.stage = stage;
    return r;
  };
  // Two columns of two stages: every stage of a column processes the column's 64 samples.
  StepTable t({at(0, 0), at(1, 1), at(2, 0), at(3, 1)});
  EXPECT_EQ(t.totalSamples(), 128);
}

TEST(StepRecord, RowRoundTrip) {
  StepRecord r = rec(7, 3, 1.5, 9.25);
  r.loss = 0.125;
  r.bytesSent = 4096;
  r.bytesReceived = 8192;
  r.stage = 2;
  r.microBatches = 5;
  r.bubbleMs = 1.25;
  r.sendMs = 0.5;
  r.recvMs = 0.75;
  r.dataMs = 2.5;
  r.throttledPeriods = 6;
  r.throttledMs = 31.5;
  r.syncCpuMs = 4.25;
  r.commPhases = 12;
  r.gradSqLocal = 3.5;
  r.gradSq = 2.25;
  r.noiseScale = 17;
  r.lossScale = 1024;
  r.skipped = 1;
  r.ownMs = 6.5;
  r.probeSamples = 1;
  r.servingMs = 2.75;
  r.clientsServed = 2;
  auto row = r.toRow();
  ASSERT_EQ(row.size(), static_cast<size_t>(StepRecord::kFields));
  auto back = StepRecord::fromRow(row.data());
  EXPECT_EQ(back.step, 7);
  EXPECT_EQ(back.rank, 3);
  EXPECT_DOUBLE_EQ(back.updateMs, 9.25);
  EXPECT_EQ(back.bytesSent, 4096);
  EXPECT_EQ(back.bytesReceived, 8192);
  EXPECT_EQ(back.stage, 2);
  EXPECT_EQ(back.microBatches, 5);
  EXPECT_DOUBLE_EQ(back.bubbleMs, 1.25);
  EXPECT_DOUBLE_EQ(back.sendMs, 0.5);
  EXPECT_DOUBLE_EQ(back.recvMs, 0.75);
  EXPECT_DOUBLE_EQ(back.dataMs, 2.5);
  EXPECT_EQ(back.throttledPeriods, 6);
  EXPECT_DOUBLE_EQ(back.throttledMs, 31.5);
  EXPECT_DOUBLE_EQ(back.syncCpuMs, 4.25);
  EXPECT_EQ(back.commPhases, 12);
  EXPECT_DOUBLE_EQ(back.gradSqLocal, 3.5);
  EXPECT_DOUBLE_EQ(back.gradSq, 2.25);
  EXPECT_DOUBLE_EQ(back.noiseScale, 17);
  EXPECT_DOUBLE_EQ(back.lossScale, 1024);
  EXPECT_EQ(back.skipped, 1);
  EXPECT_DOUBLE_EQ(back.ownMs, 6.5);
  EXPECT_EQ(back.probeSamples, 1);
  EXPECT_DOUBLE_EQ(back.servingMs, 2.75);
  EXPECT_EQ(back.clientsServed, 2);
  EXPECT_EQ(back.timedSamples(), back.batch);  // a share: its samples
  back.batch = 0;
  EXPECT_EQ(back.timedSamples(), 1);  // batch 0: the probe's
}

// New columns come last, so a reader that takes columns by position up to data_ms still reads: the CPU-quota
// ones (issue 30), the gradient noise scale's (issue 32), fp16's loss scale and skipped step (issue 54), then the
// rank's own time around its compute (issue 55); empty cells where nothing was measured.
TEST(StepTable, CsvEndsWithTheCpuQuotaTheNoiseScaleTheLossScaleThenTheOwnTimeColumns) {
  StepRecord r = rec(0, 0, 1, 2);
  r.throttledPeriods = 3;
  r.throttledMs = 12.5;
  r.syncCpuMs = 0.75;
  r.commPhases = 4;
  EXPECT_NE(StepTable({r}).toCsv().find(",3,12.500,0.7500,4,,,,,0,0.0000\n"), std::string::npos)
      << StepTable({r}).toCsv();
  r.gradSqLocal = 2.5;
  r.gradSq = 1.25;
  r.noiseScale = 40;
  const std::string csv = StepTable({r}).toCsv();
  EXPECT_NE(csv.find(",3,12.500,0.7500,4,2.5,1.25,40,,0,0.0000\n"), std::string::npos) << csv;
  r.lossScale = 32768;
  r.skipped = 1;
  r.ownMs = 6.25;
  EXPECT_NE(StepTable({r}).toCsv().find(",40,32768,1,6.2500\n"), std::string::npos) << StepTable({r}).toCsv();
}

TEST(RunSummary, JsonCarriesTheHeadlineNumbers) {
  RunSummary s;
  s.model = "cnn";
  s.samplesPerSecond = 812.5;
  s.updateMsPer100 = {10, 20};
  s.evals.push_back({100, 0.875, 0.4});
  auto j = s.toJson();
  EXPECT_EQ(j["model"], "cnn");
  EXPECT_DOUBLE_EQ(j["samples_per_second"].get<double>(), 812.5);
  EXPECT_DOUBLE_EQ(j["final_accuracy"].get<double>(), 0.875);
  EXPECT_EQ(j["weight_update_ms_per_100"].size(), 2u);
}

}  // namespace
}  // namespace balancenet::metrics
