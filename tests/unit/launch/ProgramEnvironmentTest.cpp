// What a launched program's worker finds in its environment: torchrun's variables.
#include "balancenet/launch/ProgramEnvironment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace balancenet::launch {
namespace {

TEST(ProgramEnvironment, TorchrunsVariables) {
  job::JobConfig c;
  c.launch.nnodes = 2;
  c.launch.nodeRank = 1;
  c.resilience.maxRestarts = 3;
  c.trainer.runDir = "runs/20260101-120000-42/";
  c.threads = 4;
  const auto env = programVariables(c, /*restarts=*/2, {"PATH=/bin"});
  const std::set<std::string> all(env.begin(), env.end());
  for (const char* entry :
       {"GROUP_RANK=1", "TORCHELASTIC_RESTART_COUNT=2", "TORCHELASTIC_MAX_RESTARTS=3",
        "TORCHELASTIC_RUN_ID=20260101-120000-42", "TORCHELASTIC_USE_AGENT_STORE=True", "OMP_NUM_THREADS=4"})
    EXPECT_TRUE(all.count(entry)) << entry;
}

TEST(ProgramEnvironment, TheUsersOwnOmpNumThreadsWins) {
  job::JobConfig c;
  c.threads = 4;
  for (const auto& entry : programVariables(c, 0, {"OMP_NUM_THREADS=7"}))
    EXPECT_NE(entry.rfind("OMP_NUM_THREADS=", 0), 0u) << "set twice: " << entry;
}

// A script's own init_process_group("gloo") listens on --iface as the session does; the user's own value wins, and on
// one machine (a loopback master) none is set: Gloo's default is right there.
TEST(ProgramEnvironment, GlooListensOnTheJobsInterface) {
  job::JobConfig c;
  c.launch.nnodes = 2;
  c.launch.masterAddr = "127.0.0.1";
  c.launch.iface = "lo";
  const auto env = programVariables(c, 0, {});
  EXPECT_EQ(std::count(env.begin(), env.end(), "GLOO_SOCKET_IFNAME=lo"), 1);
  for (const auto& entry : programVariables(c, 0, {"GLOO_SOCKET_IFNAME=eth1"}))
    EXPECT_NE(entry.rfind("GLOO_SOCKET_IFNAME=", 0), 0u) << "set twice: " << entry;
  c.launch.iface.clear();
  c.launch.nnodes = 1;
  for (const auto& entry : programVariables(c, 0, {}))
    EXPECT_NE(entry.rfind("GLOO_SOCKET_IFNAME=", 0), 0u) << "on one machine: " << entry;
}

}  // namespace
}  // namespace balancenet::launch
