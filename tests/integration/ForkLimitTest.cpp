// A launcher asked for more processes than this host's memory holds refuses before it forks (`federate --clients
// 70000` forked until the machine ran out of memory). The binary runs inside a memory cgroup made for the test, so
// that a launcher that did fork could not take the machine down. Needs root (CI runs as root). And a launcher that
// cannot start a worker after others started (an open-file limit here, as a process limit would) stops them and
// says so in one line.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "BinaryFixture.h"
#include "balancenet/core/CgroupText.h"

namespace balancenet::testing {
namespace {

namespace fs = std::filesystem;

// A memory cgroup of its own: v2 at the hierarchy's root, or v1 beneath this process's memory cgroup.
class MemoryCgroup {
 public:
  // Nothing (and `why` says why) where this machine cannot make one: not root, no memory controller.
  static std::optional<MemoryCgroup> make(int64_t limitBytes, std::string& why) {
    const std::string self = readFile("/proc/self/cgroup");
    const std::string name = "bnfork" + std::to_string(::getpid());
    fs::path dir, limitFile;
    std::error_code ec;
    if (readFile("/sys/fs/cgroup/cgroup.subtree_control").find("memory") != std::string::npos) {
      dir = fs::path("/sys/fs/cgroup") / name;
      limitFile = dir / "memory.max";
    } else if (const auto v1 = cgroupLine(self, "memory"); v1 && fs::is_directory("/sys/fs/cgroup/memory", ec)) {
      dir = fs::path("/sys/fs/cgroup/memory") / fs::path(v1->path).relative_path() / name;
      limitFile = dir / "memory.limit_in_bytes";
    } else {
      why = "no cgroup memory controller (neither v2 memory in cgroup.subtree_control nor v1 /sys/fs/cgroup/memory)";
      return std::nullopt;
    }
    if (!fs::create_directory(dir, ec)) {
      why = "cannot create " + dir.string() + " (" + ec.message() + "; CI runs this test as root)";
      return std::nullopt;
    }
    MemoryCgroup cg;
    cg.dir_ = dir;
    std::ofstream(limitFile) << limitBytes;
    if (cgroupNumber(readFile(limitFile)).value_or(-1) != limitBytes) {
      why = "cannot set " + limitFile.string();
      return std::nullopt;
    }
    return cg;
  }
  MemoryCgroup(MemoryCgroup&& o) noexcept : dir_(std::move(o.dir_)) { o.dir_.clear(); }
  ~MemoryCgroup() {
    if (dir_.empty()) return;
    for (pid_t pid : processes()) ::kill(pid, SIGKILL);  // only what the test put there, if it outlived it
    for (int i = 0; i < 50 && !processes().empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::error_code ec;
    fs::remove(dir_, ec);
  }

  std::vector<pid_t> processes() const {
    std::istringstream in(readFile((dir_ / "cgroup.procs").string()));
    std::vector<pid_t> pids;
    for (pid_t pid; in >> pid;) pids.push_back(pid);
    return pids;
  }
  // `argv` started inside the cgroup: the shell joins it, then becomes the program.
  std::vector<std::string> inside(const std::vector<std::string>& argv) const {
    std::vector<std::string> out{"/bin/sh", "-c", "echo $$ > \"$0\" && exec \"$@\"", (dir_ / "cgroup.procs").string()};
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
  }

 private:
  MemoryCgroup() = default;
  fs::path dir_;
};

class ForkLimit : public BinaryFixture {
 protected:
  // Runs `args` in a 1 GiB cgroup; expects the one-line refusal naming `fragment`, exit 2, and that the
  // cgroup never held more than the launcher.
  void expectRefusedBeforeForking(const std::vector<std::string>& args, const std::string& fragment) {
    std::string why;
    auto cg = MemoryCgroup::make(int64_t{1} << 30, why);
    if (!cg) GTEST_SKIP() << why;
    std::vector<std::string> argv{BALANCENET_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    size_t most = 0;
    ProcessOptions o;
    o.timeoutSeconds = 60;
    o.whileRunning = [&](pid_t, double) { most = std::max(most, cg->processes().size()); };
    const auto r = runProcess(cg->inside(argv), o);
    expectOneLineError(r, fragment, 2);
    EXPECT_NE(r.output.find("is available (cgroup limit 1024 MiB in /sys/fs/cgroup/"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("--force"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("[rank"), std::string::npos) << "a worker started: " << r.output;
    EXPECT_LE(most, 1u) << "the launcher forked";
  }
};

TEST_F(ForkLimit, TrainRefusesMoreWorkersThanTheMemoryHolds) {
  expectRefusedBeforeForking({"train", "--data-dir", dataDir_, "--run-dir", dir_.file("run"), "--workers", "16"},
                             "--workers 16 would start 16 processes of an estimated ");
}

TEST_F(ForkLimit, FederateRefusesMoreClientsThanTheMemoryHolds) {
  expectRefusedBeforeForking(
      {"federate", "--data-dir", dataDir_, "--run-dir", dir_.file("run"), "--clients", "70000", "--rounds", "1"},
      "--clients 70000 would start 70001 processes of an estimated ");
}

// The launcher under an open-file limit (`ulimit -n`): each worker's output pipe keeps one descriptor open, so
// the limit decides which worker's start fails; the first limit, counting up, at which a later worker's start
// fails with some workers already running is the case.
TEST_F(ForkLimit, AWorkerThatCannotStartStopsTheOnesStartedWithOneLine) {
  int probe = 0;
  auto launch = [&](int files) {
    const std::string run = dir_.file("run-" + std::to_string(probe++));
    std::vector<std::string> argv{"/bin/sh",
                                  "-c",
                                  "ulimit -n \"$0\" && exec \"$@\"",
                                  std::to_string(files),
                                  BALANCENET_BINARY,
                                  "train",
                                  "--data-dir",
                                  dataDir_,
                                  "--run-dir",
                                  run,
                                  "--workers",
                                  "4",
                                  "--steps",
                                  "1",
                                  "--model",
                                  "mlp",
                                  "--width",
                                  "0.25",
                                  "--global-batch",
                                  "16"};
    ProcessOptions o;
    o.timeoutSeconds = 120;
    return std::make_pair(runProcess(argv, o), run);
  };
  // Below the limit sought the launcher fails fast (before its first worker, or at it); 4 files are too few.
  for (int files = 4; files <= 64; ++files) {
    const auto [r, run] = launch(files);
    const auto at = r.output.find("could not start worker rank ");
    if (at == std::string::npos || r.output.find("could not start worker rank 0:") != std::string::npos) continue;
    // Workers 0..k-1 ran when worker k could not start.
    const int k = std::stoi(r.output.substr(at + std::string("could not start worker rank ").size()));
    expectOneLineError(r, "could not start worker rank " + std::to_string(k) + ": pipe: Too many open files", 1);
    EXPECT_NE(r.output.find(fmt::format("stopped the {} process{} already started", k, k == 1 ? "" : "es")),
              std::string::npos)
        << r.output;
    // None of them outlives the launcher: no process names the run, on its command line (the launcher) or in the
    // job its environment holds (a worker, `balancenet worker` with BALANCENET_JOB_CONFIG).
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/proc", ec)) {
      std::string cmdline = readFile((entry.path() / "cmdline").string());
      std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
      EXPECT_EQ(cmdline.find(run + " "), std::string::npos) << "still running: " << cmdline;
      const std::string environ = readFile((entry.path() / "environ").string());
      EXPECT_EQ(environ.find("\"runDir\":\"" + run + "\""), std::string::npos) << "still running: " << cmdline;
    }
    return;
  }
  FAIL() << "no open-file limit from 4 to 64 stopped the launcher after its first worker";
}

}  // namespace
}  // namespace balancenet::testing
