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

  // The job's token (kTestbedJobToken) in a file private to its owner: every host's command gives --job-token-file.
  std::string jobTokenFile() const { return dir_.file("job-token"); }

  // Hosts of different sizes: --nproc-per-node of each host by index (empty: 1 each); and whether a worker takes
  // its default threads (its host's quota shared by its host's workers) instead of --threads 1.
  std::vector<int> workersOnHost_;
  bool defaultThreads_ = false;
  // Whether every host's command names --iface eth0 (as docs/usage.md shows); false: the default, the interface
  // that routes to the master.
  bool namesIface_ = true;

  // Host `host`'s run directory (its workers write there; rank 0's holds steps.csv, splits.csv, summary.json).
  std::string runDir(int host) const { return dir_.file("run-h" + std::to_string(host)); }

  // The command line of host `host` of a job over hosts 0..jobHosts-1 of `bed` (0: every host): `flags`
  // plus the multi-host flags.
  std::vector<std::string> hostCommand(const Testbed& bed, int host, const std::vector<std::string>& flags,
                                       int jobHosts = 0) const;

  // Starts the command of every host of the job (hosts 0..jobHosts-1; 0: all of `bed`) at once (one thread
  // each), waits for all, returns each host's result (every host given the job token file);
  // `whileRunning(host, pid, seconds)` is called while host's process runs.
  std::vector<ProcessResult> trainOnHosts(const Testbed& bed, const std::vector<std::string>& flags,
                                          ProcessOptions options = {},
                                          const std::function<void(int host, pid_t, double)>& whileRunning = {},
                                          int jobHosts = 0);

  // The job whose rank 0 ended on host `rank0Host` trained `steps` steps of `globalBatch` samples each
  // (summary.json), and steps.csv has a row of every step, `lastStepRanks` of them for the last one.
  void expectEveryStepTrained(int steps, int globalBatch, int lastStepRanks, int rank0Host = 0) const;

  // Trains `flags` in one process (--nodes 1) and expects the parameters a multi-host run saved in `saved`
  // (--save-params) to match its within the float bound of `steps` steps; `what` names the run in the printed line.
  void expectOneProcessParameters(const std::vector<std::string>& flags, const std::string& saved, int steps,
                                  const std::string& what);
};

}  // namespace balancenet::testing
