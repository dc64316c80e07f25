// Default threads on a host capped by a cgroup CPU quota: a worker sizes its threads to the quota, not to the
// machine's cores (issue 29: one cnn worker under 0.45 cores trained 46.7 samples/s with a thread per core),
// and its steps.csv counts the quota's stalls (issue 30).
#include <gtest/gtest.h>

#include <cstdio>

#include <nlohmann/json.hpp>

#include "CsvRows.h"
#include "TestbedFixture.h"

namespace balancenet::testing {
namespace {

using HostThreads = TestbedFixture;

TEST_F(HostThreads, AWorkerUnderAQuotaBelowOneCoreRunsOneThread) {
  Testbed bed({"0.45"});
  // Default flags: no --threads (trainCommand would add one), one host, one worker.
  const auto r = runProcess(bed.asHost(0, {BALANCENET_BINARY, "train", "--data-dir", dataDir_, "--run-dir", runDir(0),
                                           "--steps", "20", "--log-level", "info"}));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("threads: 1 per worker: 0.45 cores (cgroup quota 0.45 cores in /sys/fs/cgroup/"),
            std::string::npos)
      << r.output;
  const auto summary = nlohmann::json::parse(readFile(runDir(0) + "/summary.json"));
  ASSERT_EQ(summary["workers"].size(), 1u) << summary.dump();
  EXPECT_EQ(summary["workers"][0]["threads"], 1) << summary.dump();
  // Its sgemm peak, which the run's FLOP/s is compared with, is one thread's too (it was measured with a thread
  // for each of the machine's cores, peak_threads 2).
  EXPECT_EQ(summary["workers"][0]["peak_threads"], 1) << summary.dump();

  // The quota shows in steps.csv (issue 30): one thread wants a whole core, the host grants 0.45 of each 10 ms
  // period, so the kernel stalls the worker in most steps.
  const auto rows = readCsvRows(runDir(0) + "/steps.csv");
  ASSERT_EQ(rows.size(), 20u);
  int throttledSteps = 0;
  double throttledMs = 0;
  for (const auto& row : rows) {
    throttledSteps += std::stoll(row.at("throttled_periods")) > 0;
    throttledMs += std::stod(row.at("throttled_ms"));
  }
  std::printf("0.45-core host: %d of 20 steps throttled, %.0f ms stalled in all\n", throttledSteps, throttledMs);
  EXPECT_GE(throttledSteps, 10) << readFile(runDir(0) + "/steps.csv");
  EXPECT_GT(throttledMs, 0);
}

}  // namespace
}  // namespace balancenet::testing
