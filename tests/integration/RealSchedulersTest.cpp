// Real schedulers on this machine launch the examples: examples/slurm/train.sbatch under `sbatch --wait` in a
// one-node Slurm (scripts/slurm-local.sh: Debian's slurmctld + slurmd), whose `srun` starts 4 balancenet
// workers, and examples/mpi/train.sh, whose Open MPI `mpirun` starts 4. Each learns what
// `balancenet train --workers 4` learns. One test, so that both compare with one local run (CI time).
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include <nlohmann/json.hpp>

#include "BinaryFixture.h"
#include "testing/FloatBound.h"
#include "testing/ReferenceTraining.h"

namespace balancenet::testing {
namespace {

const std::string kSource = BALANCENET_SOURCE_DIR;
constexpr int kWorkers = 4;
constexpr int kSteps = 3;

class RealSchedulers : public BinaryFixture {
 protected:
  void SetUp() override {
    BinaryFixture::SetUp();
    slurmDir_ = dir_.file("slurm");
    // Without root or the packages this fails (never a skip): CI installs them (scripts/test.sh).
    const auto started = runProcess({kSource + "/scripts/slurm-local.sh", "start", slurmDir_});
    ASSERT_EQ(started.exitCode, 0) << started.output;
  }
  // Also after a failed assertion: no daemon or job outlives the test.
  void TearDown() override { runProcess({kSource + "/scripts/slurm-local.sh", "stop", slurmDir_}); }

  // Equal shares of a fixed global batch: a launcher's 4 processes and --workers 4 do the same arithmetic.
  std::vector<std::string> job(const std::vector<std::string>& more) const {
    std::vector<std::string> flags{
        "--model",    "mlp",   "--width",    "0.25", "--global-batch", "32",    "--steps",      std::to_string(kSteps),
        "--lr",       "0.05",  "--momentum", "0.9",  "--policy",       "equal", "--eval-every", "0",
        "--data-dir", dataDir_};
    flags.insert(flags.end(), more.begin(), more.end());
    return flags;
  }

  // The example as a user submits it, with sbatch's options for this one-node cluster beating its #SBATCH
  // lines; returns the job's directory (balancenet-<id>, beside the output balancenet-<id>.out).
  std::string submitSbatchExample(const std::vector<std::string>& flags) {
    const std::string jobs = dir_.file("jobs");
    std::filesystem::create_directories(jobs);
    std::vector<std::string> argv{"/usr/bin/sbatch",
                                  "--wait",
                                  "--chdir=" + jobs,
                                  "--nodes=1",
                                  "--ntasks-per-node=" + std::to_string(kWorkers),
                                  "--cpus-per-task=1",
                                  "--export=ALL,BALANCENET=" BALANCENET_BINARY,
                                  kSource + "/examples/slurm/train.sbatch"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    ProcessOptions o;
    o.env = {{"SLURM_CONF", slurmDir_ + "/slurm.conf"}};
    const auto r = runProcess(argv, o);
    EXPECT_EQ(r.exitCode, 0) << r.output;
    std::smatch id;
    EXPECT_TRUE(std::regex_search(r.output, id, std::regex(R"(Submitted batch job (\d+))"))) << r.output;
    return id.empty() ? jobs : jobs + "/balancenet-" + id[1].str();
  }

  // examples/mpi/train.sh with 4 processes, as root (which mpirun refuses unless told twice) on this 2-core
  // machine (more processes than cores), the store on a free port: the default 29500 may be taken here.
  ProcessResult runMpirunExample(const std::vector<std::string>& flags) {
    std::vector<std::string> argv{kSource + "/examples/mpi/train.sh", "--threads", "1"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    ProcessOptions o;
    o.env = {{"BALANCENET", BALANCENET_BINARY},
             {"NP", std::to_string(kWorkers)},
             {"OUT", dir_.file("out")},
             {"RUN_DIR", dir_.file("run-mpi")},
             {"OMPI_ALLOW_RUN_AS_ROOT", "1"},
             {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"},
             {"OMPI_MCA_rmaps_base_oversubscribe", "1"},
             {"MASTER_PORT", std::to_string(freePort())}};
    return runProcess(argv, o);
  }

  // Rank 0's summary says one job of 4 workers trained every step (not 4 jobs of one).
  static void expectFourWorkersTrained(const std::string& runDir) {
    const auto summary = nlohmann::json::parse(readFile(runDir + "/summary.json"));
    EXPECT_EQ(summary["nodes"], kWorkers);
    EXPECT_EQ(summary["steps"], kSteps);
  }

  double differenceFromLocal(const std::string& path) const {
    return maxAbsDifference(loadSavedParameters(path), loadSavedParameters(dir_.file("local.pt")));
  }
  // What float summation order explains between a run of the job and the local one.
  double localBound() const { return exactnessBound(loadSavedParameters(dir_.file("local.pt")), kSteps); }

  std::string slurmDir_;
};

TEST_F(RealSchedulers, SlurmAndMpirunExamplesLearnWhatFourWorkersLearn) {
  // The local run first, while the new slurmctld passes the few seconds before it schedules a batch job.
  const auto local = train(job({"--workers", std::to_string(kWorkers), "--save-params", dir_.file("local.pt"),
                                "--run-dir", dir_.file("run-local")}));
  ASSERT_EQ(local.exitCode, 0) << local.output;

  const auto jobDir = submitSbatchExample(job({"--save-params", dir_.file("srun.pt")}));
  ASSERT_FALSE(HasFailure());
  const auto out = readFile(jobDir + ".out");
  const std::string lastStep = "[info] step " + std::to_string(kSteps) + "/" + std::to_string(kSteps);
  EXPECT_NE(out.find(lastStep), std::string::npos) << out;
  expectFourWorkersTrained(jobDir + "/run");
  const double srun = differenceFromLocal(dir_.file("srun.pt"));
  std::printf("sbatch (srun, 4 tasks) vs --workers 4: max |param difference| = %.3g (float bound %.3g)\n", srun,
              localBound());
  EXPECT_LT(srun, localBound());
  // The token the script made: 32 random bytes in hex, readable by the user alone.
  const auto token = readFile(jobDir + "/token");
  EXPECT_TRUE(std::regex_match(token, std::regex("[0-9a-f]{64}\n"))) << token;
  EXPECT_EQ(std::filesystem::status(jobDir + "/token").permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);

  const auto mpi = runMpirunExample(job({"--save-params", dir_.file("mpi.pt")}));
  ASSERT_EQ(mpi.exitCode, 0) << mpi.output;
  expectFourWorkersTrained(dir_.file("run-mpi"));
  const double mpirun = differenceFromLocal(dir_.file("mpi.pt"));
  std::printf("mpirun -n 4 vs --workers 4: max |param difference| = %.3g (float bound %.3g)\n", mpirun, localBound());
  EXPECT_LT(mpirun, localBound());
}

}  // namespace
}  // namespace balancenet::testing
