// A worker's default threads: its host's CPU (affinity mask, cgroup quota) shared by LOCAL_WORLD_SIZE workers.
#include "balancenet/worker/WorkerThreads.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "balancenet/cli/flags/TrainFlags.h"
#include "balancenet/core/CpuAllowance.h"
#include "balancenet/core/EnvironmentVariables.h"
#include "testing/LauncherViewTest.h"
#include "testing/TempDir.h"
#include "testing/UsageErrors.h"

namespace balancenet::cli {
using job::JobConfig;
using worker::chooseDefaultThreads;
namespace {

using balancenet::testing::usageErrorOf;

class WorkerThreads : public LauncherViewTest {
 protected:
  void SetUp() override {
    LauncherViewTest::SetUp();
    ::setenv(kRankVar, "0", 1);
    ::setenv(kWorldSizeVar, "4", 1);
    ::setenv(kMasterPortVar, "29500", 1);
  }
  void TearDown() override {
    for (const auto& v : environmentVariables())
      if (v.identity) ::unsetenv(v.name);
  }
};

// torchrun and Slurm set LOCAL_WORLD_SIZE, not --nproc-per-node: before, each of 4096 workers took every core.
TEST_F(WorkerThreads, LocalWorldSizeSharesTheCores) {
  ::setenv(kLocalWorldSizeVar, "4096", 1);
  const auto c = parseTrainCommandLine({});
  ASSERT_TRUE(c.worker);
  EXPECT_EQ(c.worker->localWorldSize, 4096);
  EXPECT_EQ(c.threads, 1);
  EXPECT_NE(c.threadsFrom.find("4096 local workers (LOCAL_WORLD_SIZE)"), std::string::npos) << c.threadsFrom;
  ::setenv(kLocalWorldSizeVar, "1", 1);
  EXPECT_EQ(parseTrainCommandLine({}).threads, threadsPerWorker(readCpuAllowance().cores(), 1));
  EXPECT_EQ(parseTrainCommandLine({"--threads", "3"}).threads, 3);  // --threads wins
  EXPECT_TRUE(parseTrainCommandLine({"--threads", "3"}).threadsFrom.empty());
}

TEST_F(WorkerThreads, ABadLocalWorldSizeIsOneLine) {
  for (const char* bad : {"0", "-1", "two", "2x", " 2", "+2", "", "99999999999"}) {
    ::setenv(kLocalWorldSizeVar, bad, 1);
    const auto message = usageErrorOf([] { parseTrainCommandLine({}); });
    EXPECT_NE(message.find("LOCAL_WORLD_SIZE='" + std::string(bad) + "'"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

void write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

TEST_F(WorkerThreads, ACgroupQuotaBelowOneCoreGivesOneThreadAndSaysWhere) {
  testing::TempDir tmp;
  write(tmp.file("self"), "0::/testbed/h0\n");
  write(tmp.file("fs/cgroup.controllers"), "cpu\n");
  write(tmp.file("fs/testbed/h0/cpu.max"), "45000 100000\n");
  JobConfig c = parseTrainCommandLine({"--threads", "7"});
  chooseDefaultThreads(c, {tmp.file("fs"), tmp.file("self")});
  EXPECT_EQ(c.threads, 1);
  EXPECT_NE(c.threadsFrom.find("0.45 cores"), std::string::npos) << c.threadsFrom;
  EXPECT_NE(c.threadsFrom.find(tmp.file("fs/testbed/h0/cpu.max")), std::string::npos) << c.threadsFrom;
  // A quota of 64 cores on this machine: the affinity mask decides.
  write(tmp.file("fs/testbed/h0/cpu.max"), "6400000 100000\n");
  chooseDefaultThreads(c, {tmp.file("fs"), tmp.file("self")});
  CpuAllowance unlimited = readCpuAllowance({tmp.path(), tmp.file("missing")});
  EXPECT_EQ(c.threads, threadsPerWorker(std::min(64.0, unlimited.cores()), 1));
}

}  // namespace
}  // namespace balancenet::cli
