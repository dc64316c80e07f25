// Real Slurm (scripts/slurm-local.sh: Debian's slurmctld + slurmd on this machine): examples/slurm/train.sbatch
// under `sbatch --wait`, whose `srun` starts 4 balancenet workers that learn what `train --workers 4` learns.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "SchedulerJob.h"

namespace balancenet::testing {
namespace {

const std::string kSlurmScript = std::string(BALANCENET_SOURCE_DIR) + "/scripts/slurm-local.sh";

class Slurm : public SchedulerJobFixture {
 protected:
  void SetUp() override {
    SchedulerJobFixture::SetUp();
    slurmDir_ = dir_.file("slurm");
    // Without the packages this fails (never a skip): CI installs them (scripts/test.sh).
    const auto started = runProcess({kSlurmScript, "start", slurmDir_});
    ASSERT_EQ(started.exitCode, 0) << started.output;
  }
  // Also after a failed assertion: no daemon or job outlives the test.
  void TearDown() override { runProcess({kSlurmScript, "stop", slurmDir_}); }

  ProcessResult slurm(const std::vector<std::string>& argv) {
    ProcessOptions o;
    o.env = {{"SLURM_CONF", slurmDir_ + "/slurm.conf"}};
    return runProcess(argv, o);
  }

  std::string slurmDir_;
};

// One scheduler run covers both: the example's step is `srun` of 4 tasks (the job's), each a balancenet worker.
TEST_F(Slurm, ExampleSbatchJobOfFourTasksLearnsWhatFourWorkersLearn) {
  // First, while the new slurmctld passes the few seconds before it schedules its first batch job.
  ASSERT_NO_FATAL_FAILURE(trainWithLocalWorkers());
  // The example as a user submits it, with sbatch's options for this one-node cluster beating its #SBATCH lines.
  const std::string jobs = dir_.file("jobs");
  std::filesystem::create_directories(jobs);
  auto flags = schedulerJobFlags();
  flags.insert(flags.end(), {"--data-dir", dataDir_, "--save-params", dir_.file("srun.pt")});
  std::vector<std::string> argv{"/usr/bin/sbatch",
                                "--wait",
                                "--chdir=" + jobs,
                                "--nodes=1",
                                "--ntasks-per-node=" + std::to_string(kSchedulerWorkers),
                                "--cpus-per-task=1",
                                "--export=ALL,BALANCENET=" BALANCENET_BINARY,
                                std::string(BALANCENET_SOURCE_DIR) + "/examples/slurm/train.sbatch"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  const auto r = slurm(argv);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::smatch id;
  ASSERT_TRUE(std::regex_search(r.output, id, std::regex(R"(Submitted batch job (\d+))"))) << r.output;
  const std::string jobDir = jobs + "/balancenet-" + id[1].str();
  const auto out = readFile(jobDir + ".out");
  const std::string lastStep = "[info] step " + std::to_string(kSchedulerSteps) + "/" + std::to_string(kSchedulerSteps);
  EXPECT_NE(out.find(lastStep), std::string::npos) << out;
  const auto summary = nlohmann::json::parse(readFile(jobDir + "/run/summary.json"));
  EXPECT_EQ(summary["nodes"], kSchedulerWorkers);  // four workers trained, not four jobs of one
  EXPECT_EQ(summary["steps"], kSchedulerSteps);
  const double difference = differenceFromLocalWorkers(dir_.file("srun.pt"));
  std::printf("sbatch (srun, 4 tasks) vs --workers 4: max |param difference| = %.3g\n", difference);
  EXPECT_LT(difference, 1e-6);
  // The token the script made: 32 random bytes in hex, readable by the user alone.
  const auto token = readFile(jobDir + "/token");
  EXPECT_TRUE(std::regex_match(token, std::regex("[0-9a-f]{64}\n"))) << token;
  EXPECT_EQ(std::filesystem::status(jobDir + "/token").permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

}  // namespace
}  // namespace balancenet::testing
