// Real mpirun (Debian's Open MPI): examples/mpi/train.sh, 4 processes started by mpirun, learns what
// `balancenet train --workers 4` learns.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "SchedulerJob.h"

namespace balancenet::testing {
namespace {

using Mpirun = SchedulerJobFixture;

TEST_F(Mpirun, ExampleScriptLearnsWhatFourWorkersLearn) {
  ASSERT_NO_FATAL_FAILURE(trainWithLocalWorkers());
  auto argv = schedulerJobFlags();
  argv.insert(argv.begin(), std::string(BALANCENET_SOURCE_DIR) + "/examples/mpi/train.sh");
  argv.insert(argv.end(), {"--data-dir", dataDir_, "--threads", "1", "--save-params", dir_.file("mpi.pt")});
  ProcessOptions o;
  o.env = {{"BALANCENET", BALANCENET_BINARY},
           {"NP", std::to_string(kSchedulerWorkers)},
           {"OUT", dir_.file("out")},
           {"RUN_DIR", dir_.file("run")},
           // CI runs as root, which mpirun refuses unless told twice; and 4 processes on a 2-core machine.
           {"OMPI_ALLOW_RUN_AS_ROOT", "1"},
           {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"},
           {"OMPI_MCA_rmaps_base_oversubscribe", "1"}};
  const auto r = runProcess(argv, o);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const double difference = differenceFromLocalWorkers(dir_.file("mpi.pt"));
  std::printf("mpirun -n 4 vs --workers 4: max |param difference| = %.3g\n", difference);
  EXPECT_LT(difference, 1e-6);
  const auto summary = nlohmann::json::parse(readFile(dir_.file("run/summary.json")));
  EXPECT_EQ(summary["nodes"], kSchedulerWorkers);
  EXPECT_EQ(summary["steps"], kSchedulerSteps);
}

}  // namespace
}  // namespace balancenet::testing
