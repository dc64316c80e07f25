// `balancenet launch` end to end: an unmodified DDP script trains like one process, the workers see torchrun's
// environment, bad input is one line, a failing rank is named and nothing is left behind. Real Python processes.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "BinaryFixture.h"
#include "balancenet/comm/Rendezvous.h"
#include "balancenet/job/JobConfigJson.h"
#include "testing/FloatBound.h"
#include "testing/NumpyScript.h"

namespace balancenet::testing {
namespace {

constexpr const char* kPython = BALANCENET_PYTHON_EXE;
const std::string kPlainDdp = std::string(BALANCENET_SOURCE_DIR) + "/examples/python/plain_ddp.py";

// Not a skip: without torch in the project's Python the Python side of `launch` is unchecked, which must not pass as
// checked.
#define REQUIRE_PYTHON_TORCH() \
  ASSERT_TRUE(pythonTorchInstalled()) << BALANCENET_PYTHON_EXE << " cannot import torch (scripts/setup.sh)"

class LaunchCommand : public BinaryFixture {
 protected:
  std::string writeScript(const std::string& name, const std::string& text) {
    const std::string path = dir_.file(name);
    std::ofstream(path) << text;
    return path;
  }
  // `balancenet launch FLAGS` with a run directory in the temp dir and no progress lines.
  ProcessResult launch(std::vector<std::string> words, ProcessOptions options = {}) {
    options.timeoutSeconds = 60;
    words.insert(words.begin(), {"launch", "--run-dir", dir_.file("run"), "--progress-seconds", "0"});
    return run(words, options);
  }
};

// The largest |a - b| over the tensors of two state_dicts (torch.save files), as Python reads them, and the
// largest |b| (the reference's magnitude, which the float bound scales with).
struct StateDictDifference {
  double maxDifference = 1e9;
  double referenceMagnitude = 0;
};
StateDictDifference maxStateDictDifference(const std::string& a, const std::string& b) {
  const auto r = runProcess({kPython, "-c",
                             "import sys, torch\n"
                             "a, b = torch.load(sys.argv[1]), torch.load(sys.argv[2])\n"
                             "assert a.keys() == b.keys(), (a.keys(), b.keys())\n"
                             "print(max((a[k] - b[k]).abs().max().item() for k in a),\n"
                             "      max(b[k].abs().max().item() for k in b))",
                             a, b});
  EXPECT_EQ(r.exitCode, 0) << r.output;
  StateDictDifference d;
  if (r.exitCode == 0) std::istringstream(r.output) >> d.maxDifference >> d.referenceMagnitude;
  return d;
}

TEST_F(LaunchCommand, PlainDdpScriptTrainsLikeOneProcessOnTheWholeBatch) {
  REQUIRE_PYTHON_TORCH();
  const auto reference = runProcess({kPython, kPlainDdp, "--reference", "2", "--out", dir_.file("reference.pt")});
  ASSERT_EQ(reference.exitCode, 0) << reference.output;
  const auto r = launch({"--workers", "2", "--threads", "1", kPlainDdp, "--out", dir_.file("ddp.pt")});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("[rank 0] step 5 loss"), std::string::npos) << r.output;
  const auto d = maxStateDictDifference(dir_.file("ddp.pt"), dir_.file("reference.pt"));
  const double bound = exactnessBound({at::scalar_tensor(d.referenceMagnitude)}, 6);  // plain_ddp.py's --steps
  std::cout << "max |DDP under launch - one process| = " << d.maxDifference << " (float bound " << bound << ", "
            << r.seconds << " s)" << std::endl;
  EXPECT_LT(d.maxDifference, bound);
}

// Each rank prints its torchrun variables as JSON, after checking that torch's store client (what env:// makes
// with TORCHELASTIC_USE_AGENT_STORE) reaches the launcher's store.
constexpr const char* kPrintEnvironment = R"(import datetime, json, os, sys
from torch.distributed import PrefixStore, TCPStore
e = os.environ
store = PrefixStore("/worker/attempt_" + e["TORCHELASTIC_RESTART_COUNT"],
                    TCPStore(e["MASTER_ADDR"], int(e["MASTER_PORT"]), int(e["WORLD_SIZE"]), False,
                             datetime.timedelta(seconds=20)))
store.set("hello/" + e["RANK"], "1")
store.wait(["hello/0", "hello/1"])
names = ["RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "GROUP_RANK",
         "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS", "TORCHELASTIC_RUN_ID",
         "TORCHELASTIC_USE_AGENT_STORE", "OMP_NUM_THREADS", "BALANCENET_JOB_TOKEN", "BALANCENET_JOB_CONFIG"]
print("ENV " + json.dumps({n: e.get(n) for n in names} | {"argv": sys.argv[1:]}), flush=True)
)";

TEST_F(LaunchCommand, EachWorkerSeesTorchrunsEnvironmentAndTheResolvedJob) {
  REQUIRE_PYTHON_TORCH();
  const std::string script = writeScript("env.py", kPrintEnvironment);
  ProcessOptions options;
  options.env["OMP_NUM_THREADS"] = "3";  // the user's own wins over --threads
  options.env["RANK"] = "7";             // an outer job's identity is not inherited
  const auto r = launch({"--workers", "2", "--threads", "1", "--policy", "equal", script, "--lr", "0.1"}, options);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::map<int, nlohmann::json> byRank;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);)
    if (auto at = line.find("] ENV "); at != std::string::npos) {
      auto env = nlohmann::json::parse(line.substr(at + 6));
      byRank[std::stoi(env["RANK"].get<std::string>())] = env;
    }
  ASSERT_EQ(byRank.size(), 2u) << r.output;
  std::set<std::string> ports;
  for (const auto& [rank, env] : byRank) {
    EXPECT_EQ(env["WORLD_SIZE"], "2");
    EXPECT_EQ(env["LOCAL_RANK"], std::to_string(rank));
    EXPECT_EQ(env["LOCAL_WORLD_SIZE"], "2");
    EXPECT_EQ(env["MASTER_ADDR"], "127.0.0.1");
    EXPECT_EQ(env["GROUP_RANK"], "0");
    EXPECT_EQ(env["TORCHELASTIC_RESTART_COUNT"], "0");
    EXPECT_EQ(env["TORCHELASTIC_MAX_RESTARTS"], "0");
    EXPECT_EQ(env["TORCHELASTIC_RUN_ID"], "run");
    EXPECT_EQ(env["TORCHELASTIC_USE_AGENT_STORE"], "True");
    EXPECT_EQ(env["OMP_NUM_THREADS"], "3");
    EXPECT_EQ(env["BALANCENET_JOB_TOKEN"].get<std::string>().size(), 32u);  // made up: the store port is open
    EXPECT_EQ(env["argv"], nlohmann::json({"--lr", "0.1"}));
    ports.insert(env["MASTER_PORT"].get<std::string>());
    // The job as the launcher resolved it, what a worker's session reads: no flag parsed there.
    const auto config = job::jobConfigFromJson(env["BALANCENET_JOB_CONFIG"].get<std::string>());
    EXPECT_EQ(config.launch.nprocPerNode, 2);
    EXPECT_EQ(config.orchestration.policy, "equal");
    EXPECT_EQ(config.trainer.runDir, dir_.file("run"));
    EXPECT_EQ(config.trainer.progressSeconds, 0);
    EXPECT_EQ(config.threads, 1);
  }
  EXPECT_EQ(ports.size(), 1u);
}

// The mpirun habit: `launch --workers 2 python3 train.py` runs the user's python3 on train.py (it ran the job's
// Python on the python3 binary: a SyntaxError on '\x80' in every rank).
TEST_F(LaunchCommand, AProgramBeforeTheScriptRunsAsItIs) {
  const std::string script =
      writeScript("ranks.py", "import os, sys\nprint('RANK', os.environ['RANK'], sys.argv[1:])\n");
  const auto r = launch({"--workers", "2", "python3", script, "--lr", "0.1"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  for (const char* rank : {"0", "1"})
    EXPECT_NE(r.output.find(fmt::format("RANK {} ['--lr', '0.1']", rank)), std::string::npos) << r.output;
}

// torch's env:// clients (under /worker/attempt_0) and balancenet's rendezvous (under the token's prefix) on the
// one store a launcher serves: neither disturbs the other.
TEST_F(LaunchCommand, TorchsEnvRendezvousAndOursShareTheLaunchersStore) {
  REQUIRE_PYTHON_TORCH();
  comm::RendezvousOptions rv;
  rv.worldSize = 2;
  rv.jobToken = "launch-test-token";
  rv.timeout = std::chrono::seconds(20);
  comm::StoreServer server(rv);
  rv.masterPort = server.port();
  ProcessOptions options;
  options.timeoutSeconds = 30;
  options.env = {{"RANK", "0"},
                 {"WORLD_SIZE", "1"},
                 {"MASTER_ADDR", "127.0.0.1"},
                 {"MASTER_PORT", std::to_string(server.port())},
                 {"TORCHELASTIC_USE_AGENT_STORE", "True"},
                 {"TORCHELASTIC_RESTART_COUNT", "0"}};
  ProcessResult torchSide;
  std::thread python([&] {
    torchSide = runProcess({kPython, "-c",
                            "import torch, torch.distributed as dist\n"
                            "dist.init_process_group('gloo')\n"
                            "t = torch.ones(1); dist.all_reduce(t); print('torch all_reduce', t.item())"},
                           options);
  });
  std::vector<double> sums(2);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank)
    ranks.emplace_back([&, rank] {
      auto o = rv;
      o.rank = rank;
      auto group = comm::rendezvous(o);
      auto t = at::ones({1}) * (rank + 1);
      group->allreduceSum(t);
      sums[rank] = t.item<double>();
    });
  for (auto& t : ranks) t.join();
  python.join();
  EXPECT_EQ(torchSide.exitCode, 0) << torchSide.output;
  EXPECT_NE(torchSide.output.find("torch all_reduce 1.0"), std::string::npos) << torchSide.output;
  EXPECT_EQ(sums, (std::vector<double>{3, 3}));
}

TEST_F(LaunchCommand, BadInputIsOneLineBeforeAnyWorkerStarts) {
  const std::string script = writeScript("ok.py", "print('never runs')\n");
  const std::vector<std::pair<std::vector<std::string>, std::string>> rows = {
      {{"--workers", "2"}, "no PROGRAM"},
      {{"--workers", "2", dir_.file("missing.py")}, "missing.py: no such file"},
      {{"--workers", "2", "--split", "3,4,5", script}, "--split has 3 entries but the job has 2 workers"},
      {{"--python", dir_.file("no-python"), script}, "--python " + dir_.file("no-python") + ": no such file"},
      {{"--no-python", "no-such-program-here"}, "program 'no-such-program-here': no such executable on PATH"},
  };
  for (const auto& [words, fragment] : rows) {
    SCOPED_TRACE(fragment);
    const auto r = launch(words);
    expectOneLineError(r, fragment, 2);
    // Well before a worker could start (0.3-0.6 s alone here; one row took 3.02 s in a suite beside the testbed's
    // hosts, 2026-11-28).
    EXPECT_LT(r.seconds, 10);
    EXPECT_EQ(r.output.find("never runs"), std::string::npos) << r.output;
  }
}

TEST_F(LaunchCommand, FailingRankIsNamedAndNoWorkerIsLeftBehind) {
  REQUIRE_PYTHON_TORCH();
  const std::string script = writeScript("fail.py",
                                         "import time\n"
                                         "import torch.distributed as dist\n"
                                         "dist.init_process_group('gloo')\n"
                                         "if dist.get_rank() == 1:\n"
                                         "    raise ValueError('rank 1 gives up')\n"
                                         "time.sleep(60)  # rank 0 waits: the launcher stops it\n");
  std::set<pid_t> workers;
  ProcessOptions options;
  options.whileRunning = [&](pid_t launcher, double) {
    for (pid_t w : childrenOf(launcher)) workers.insert(w);
  };
  const auto r = launch({"--workers", "2", "--threads", "1", script}, options);
  expectOneLineError(r, "worker rank 1 (pid", 1);
  EXPECT_NE(r.output.find("exited with code 1: ValueError: rank 1 gives up"), std::string::npos) << r.output;
  // Well under rank 0's 60 s sleep: it was stopped, not waited for (starting two workers that import torch takes
  // seconds on a busy machine).
  EXPECT_LT(r.seconds, 40) << r.output;
  EXPECT_EQ(workers.size(), 2u);
  for (pid_t w : workers) EXPECT_FALSE(processAlive(w)) << "worker " << w << " outlived its launcher";
}

}  // namespace
}  // namespace balancenet::testing
