// SchedulerJob: the short job that the scheduler tests (Slurm, mpirun) start with the scheduler's own launcher
// and compare with the same job under `balancenet train --workers 4`.
#pragma once
#include <string>
#include <vector>

#include "BinaryFixture.h"
#include "testing/ReferenceTraining.h"

namespace balancenet::testing {

inline constexpr int kSchedulerWorkers = 4;
inline constexpr int kSchedulerSteps = 3;

// Equal shares of a fixed global batch: a launcher's 4 processes and --workers 4 do the same arithmetic.
inline std::vector<std::string> schedulerJobFlags() {
  return {"--model",        "mlp",   "--width",      "0.25",
          "--global-batch", "32",    "--steps",      std::to_string(kSchedulerSteps),
          "--lr",           "0.05",  "--momentum",   "0.9",
          "--policy",       "equal", "--eval-every", "0"};
}

class SchedulerJobFixture : public BinaryFixture {
 protected:
  // The job under `balancenet train --workers 4` (run dir "run-local"), its parameters saved to local.pt.
  void trainWithLocalWorkers() {
    auto flags = schedulerJobFlags();
    flags.insert(flags.end(), {"--workers", std::to_string(kSchedulerWorkers), "--save-params", dir_.file("local.pt"),
                               "--run-dir", dir_.file("run-local")});
    const auto local = train(flags);
    ASSERT_EQ(local.exitCode, 0) << local.output;
  }
  // max |difference| between the parameters a scheduler's run saved to `path` and trainWithLocalWorkers' ones.
  double differenceFromLocalWorkers(const std::string& path) {
    return maxAbsDifference(loadSavedParameters(path), loadSavedParameters(dir_.file("local.pt")));
  }
};

}  // namespace balancenet::testing
