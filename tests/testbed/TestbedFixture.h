// TestbedFixture: tests that run one `balancenet train` per testbed host, launched exactly as
// docs/usage.md tells a user with several machines (--nnodes/--node-rank/--master-addr/--iface, a job token).
// Where the machine cannot make a testbed the test is skipped, visibly, with the reason; where
// BALANCENET_TESTBED_REQUIRED=1 (CI, this project's machines) it fails instead.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "BinaryFixture.h"
#include "Testbed.h"

namespace balancenet::testing {

inline constexpr const char* kTestbedJobToken = "testbed-job-token-5f1c";
inline constexpr int kTestbedStorePort = 29500;  // every testbed has its own namespaces: the port is free

class TestbedFixture : public BinaryFixture {
 protected:
  void SetUp() override;

  // Host `host`'s run directory (its workers write there; rank 0's holds steps.csv, splits.csv, summary.json).
  std::string runDir(int host) const { return dir_.file("run-h" + std::to_string(host)); }

  // The command line of host `host` of a job over every host of `bed`: `flags` plus the multi-host flags.
  std::vector<std::string> hostCommand(const Testbed& bed, int host, const std::vector<std::string>& flags) const;

  // Starts every host's command at once (one thread each), waits for all, returns each host's result.
  // `options.env` gets the job token; `whileRunning(host, pid, seconds)` is called while host's process runs.
  std::vector<ProcessResult> trainOnHosts(
      const Testbed& bed, const std::vector<std::string>& flags, ProcessOptions options = {},
      const std::function<void(int host, pid_t, double)>& whileRunning = {});
};

}  // namespace balancenet::testing
