// Workers started by another launcher's environment alone, with no flag to translate it (schedulers/): real
// processes. srun and mpirun themselves run in tests/scheduler; MPICH's Hydra is not packaged with a working
// mpiexec here, so its variables are set by the test, as Hydra sets them.
#include <gtest/gtest.h>

#include <future>

#include "BinaryFixture.h"
#include "testing/FloatBound.h"
#include "testing/ReferenceTraining.h"

namespace balancenet::testing {
namespace {

class SchedulerLaunch : public BinaryFixture {};

const std::vector<std::string> kJob{"--model", "cnn",     "--width", "0.25", "--dropout", "0",        "--global-batch",
                                    "24",      "--steps", "4",       "--lr", "0.05",      "--policy", "equal"};

std::vector<std::string> with(std::vector<std::string> flags, const std::vector<std::string>& more) {
  flags.insert(flags.end(), more.begin(), more.end());
  return flags;
}

TEST_F(SchedulerLaunch, HydraVariablesMakeEachProcessOneWorkerAndMatchOneProcess) {
  const std::string port = std::to_string(freePort());
  auto worker = [&](int rank) {
    ProcessOptions o;
    o.env = {{"PMI_RANK", std::to_string(rank)},
             {"PMI_SIZE", "2"},
             {"MPI_LOCALRANKID", std::to_string(rank)},
             {"MPI_LOCALNRANKS", "2"},
             {"MASTER_PORT", port}};
    o.timeoutSeconds = 90;
    return train(with(kJob, {"--save-params", dir_.file("hydra.pt"), "--log-level", "debug"}), o);
  };
  auto second = std::async(std::launch::async, worker, 1);
  const auto r0 = worker(0);
  const auto r1 = second.get();
  ASSERT_EQ(r0.exitCode, 0) << r0.output;
  ASSERT_EQ(r1.exitCode, 0) << r1.output;
  EXPECT_NE(r0.output.find("threads: 1 per worker"), std::string::npos) << r0.output;

  const auto one = train(with(kJob, {"--save-params", dir_.file("one.pt"), "--run-dir", dir_.file("one")}));
  ASSERT_EQ(one.exitCode, 0) << one.output;
  const auto oneProcess = loadSavedParameters(dir_.file("one.pt"));
  const double diff = maxAbsDifference(loadSavedParameters(dir_.file("hydra.pt")), oneProcess);
  const double bound = exactnessBound(oneProcess, 4);  // kJob's --steps
  std::printf("2 Hydra-launched workers vs 1 process: max |param difference| = %.3g (float bound %.3g)\n", diff, bound);
  EXPECT_LT(diff, bound);
}

TEST_F(SchedulerLaunch, PrintConfigSaysWhatWasReadAndFromWhere) {
  ProcessOptions o;
  o.env = {{"SLURM_JOB_ID", "777"},
           {"SLURM_STEP_ID", "0"},
           {"SLURM_PROCID", "1"},
           {"SLURM_LOCALID", "1"},
           {"SLURM_NODEID", "0"},
           {"SLURM_STEP_NUM_TASKS", "2"},
           {"SLURM_STEP_TASKS_PER_NODE", "2"},
           {"SLURM_STEP_NUM_NODES", "1"},
           {"SLURM_STEP_NODELIST", "cn01"}};
  const auto r = train({"--print-config"}, o);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  for (const char* line : {"# Read from the environment (slurm's variables), not flags:", "#   rank: 1  (SLURM_PROCID)",
                           "#   world_size: 2  (SLURM_STEP_NUM_TASKS)",
                           "#   master_addr: 127.0.0.1  (the step runs on one node (SLURM_STEP_NUM_NODES=1))",
                           "#   master_port: 20777  (20000 + SLURM_JOB_ID=777 % 10000)"})
    EXPECT_NE(r.output.find(line), std::string::npos) << line << "\n" << r.output;
}

}  // namespace
}  // namespace balancenet::testing
