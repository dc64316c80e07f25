// The supervisor: this host's processes started (ChildProcess.h) over the job's store (LauncherStore.h) and
// watched until the job ends, each death handled as AfterFailure.h decides.
#include "balancenet/launch/LocalLauncher.h"

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <iostream>
#include <numeric>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "balancenet/checkpoint/CheckpointStore.h"
#include "balancenet/comm/Rendezvous.h"
#include "balancenet/core/AtomicFile.h"
#include "balancenet/core/Error.h"
#include "balancenet/elastic/Membership.h"
#include "balancenet/job/JobConfigJson.h"
#include "balancenet/job/JobRendezvous.h"
#include "balancenet/launch/AfterFailure.h"
#include "balancenet/launch/ChildProcess.h"
#include "balancenet/launch/LauncherStore.h"
#include "balancenet/launch/ProgramEnvironment.h"
#include "balancenet/launch/WorkerEnvironment.h"

namespace balancenet::launch {
using job::JobConfig;
using job::rendezvousOptions;
namespace {

volatile std::sig_atomic_t gStopSignal = 0;  // SIGINT or SIGTERM, once one arrived
void onStopSignal(int signal) { gStopSignal = signal; }

constexpr const char* kSelf = "/proc/self/exe";  // train's and federate's workers are this binary...
const std::vector<std::string> kWorkerWords = {"balancenet", "worker"};  // ...reading the job from their environment

// Ctrl-C and SIGTERM stop the workers first (see Supervisor::stopForSignal).
void catchStopSignals() {
  struct sigaction sa {};
  sa.sa_handler = onStopSignal;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

// Starts this host's workers (and host 0's parameter servers) and watches them until the job ends:
// each pass forwards their output, reaps the dead, and handles a death (an elastic job goes on without
// it and may restart it; otherwise the job stops and the cause is named).
class Supervisor {
 public:
  // `c` as resolved once, here: every process of this host is handed it (BALANCENET_JOB_CONFIG), so they all
  // write to the same run directory, report progress alike and train on the world the hosts agreed on.
  Supervisor(const JobConfig& c, int port)
      : c_(c), shape_(JobShape::of(c)), port_(port), restartsLeft_(c.resilience.maxRestarts) {}

  void startAll() {
    for (int local = 0; local < c_.launch.nprocPerNode; ++local)
      startWorker(c_.launch.firstRank() + local, /*joining=*/false);
    // Parameter servers run beside host 0's workers, supervised like them.
    for (int k = 0; c_.launch.nodeRank == 0 && k < c_.comm.servers; ++k) {
      children_.push_back(
          spawn(kSelf, kWorkerWords, fmt::format("server {}", k), fmt::format("parameter server {}", k),
                childEnvironment(inheritedEnvironment(), c_.launch, port_, withJob(serverIdentity(k)))));
      children_.back().worker = false;
    }
  }

  // Stops the processes still running and returns how many there were: a failure of the launcher itself ends the
  // job, and its processes must not be left to die with it.
  int stopRunning() {
    int running = 0;
    for (const auto& child : children_) running += child.running;
    stopAll(children_);
    return running;
  }

  // The launcher's exit code.
  int superviseUntilDone() {
    while (anyRunning(children_)) {
      pumpOutput(children_, 100);
      if (gStopSignal) return stopForSignal(gStopSignal);
      Child* failure = reap(children_);
      noteFinishedWorkers();
      if (!failure) {
        stopStragglersAfterTheEnd();
        continue;
      }
      switch (afterFailure(shape_, Death::of(failure->status, failure->rank), runningWorkers(children_), restartsLeft_,
                           finishedAt_.has_value())) {
        case AfterFailure::GoOnWithout:
          goOnWithout();
          break;
        case AfterFailure::RestartTheJob:
          restartTheJob(*failure);
          break;
        case AfterFailure::ServeTheStoreAlone:
          return serveTheStoreUntilTheJobEnds(*failure);
        case AfterFailure::StopTheJob:
          return stopAfterFailure(failure);
      }
    }
    std::cerr << "balancenet: done; results in " << c_.trainer.runDir << std::endl;
    return 0;
  }

 private:
  void startWorker(int rank, bool joining) {
    const int local = rank - c_.launch.firstRank();
    auto identity = withJob(workerIdentity(c_.launch, rank, local, joining));
    if (attempt_ > 0) identity.push_back(fmt::format("{}={}", kAttemptVar, attempt_));
    const auto name = fmt::format("rank {}", rank);
    if (!c_.program.given()) {
      children_.push_back(spawn(kSelf, kWorkerWords, name, roleOf(rank),
                                childEnvironment(inheritedEnvironment(), c_.launch, port_, identity)));
    } else {
      // A user's program finds torchrun's variables, and its session the job (python/SessionConfig.h).
      const auto inherited = withPackageOnPythonPath(inheritedEnvironment());
      const auto more = programVariables(c_, c_.resilience.maxRestarts - restartsLeft_, inherited);
      identity.insert(identity.end(), more.begin(), more.end());
      children_.push_back(spawn(c_.program.executable, c_.program.argv, name, roleOf(rank),
                                childEnvironment(inherited, c_.launch, port_, identity)));
    }
    children_.back().rank = rank;
  }

  // A process's identity variables, then the job (JobConfigJson.h): once a restarted pipeline has checkpoints,
  // its processes resume from the newest.
  std::vector<std::string> withJob(std::vector<std::string> identity) const {
    JobConfig job = c_;
    job.checkpoint.resume = job.checkpoint.resume || resumes_;
    identity.push_back(fmt::format("{}={}", kJobConfigVar, job::jobConfigJson(job)));
    return identity;
  }

  // How errors name the process of `rank`.
  std::string roleOf(int rank) const {
    if (!c_.federated) return fmt::format("worker rank {}", rank);
    return rank == 0 ? "the federated server (rank 0)" : fmt::format("client {} (rank {})", rank - 1, rank);
  }

  // 128 + the signal, as shells and torchrun report it: 130 for Ctrl-C, 143 for SIGTERM.
  int stopForSignal(int signal) {
    const char* what = signal == SIGINT ? "Ctrl-C" : "SIGTERM";
    std::cerr << fmt::format("balancenet: interrupted ({}); stopping the workers", what) << std::endl;
    stopAll(children_);
    return 128 + signal;
  }

  // A worker that exits 0 has completed the job (elastic: the others will too).
  void noteFinishedWorkers() {
    for (auto& child : children_)
      if (!child.running && !failed(child.status)) {
        child.reported = true;
        if ((c_.resilience.elastic || c_.federated) && !finishedAt_) finishedAt_ = std::chrono::steady_clock::now();
      }
  }

  // Serves the store while any worker of the job beats; exit 0 when the job finished, 1 when every
  // worker stopped before that.
  int serveTheStoreUntilTheJobEnds(const Child& failure) {
    std::cerr << fmt::format(
                     "balancenet: {} (pid {}) {}; no worker of this host remains; it serves the job's store until "
                     "the other hosts' workers finish (--elastic)",
                     failure.role, failure.pid, describeExit(failure.status))
              << std::endl;
    stopAll(children_);
    std::vector<int> ranks(c_.launch.worldSize());
    std::iota(ranks.begin(), ranks.end(), 0);
    bool finished = false;
    try {
      elastic::Membership job(comm::connectJobStore(rendezvousOptions(c_)), c_.resilience.peerTimeout);
      while (!gStopSignal && job.anyBeating(ranks)) std::this_thread::sleep_for(std::chrono::milliseconds(200));
      if (gStopSignal) return stopForSignal(gStopSignal);
      finished = job.finished();
    } catch (const std::exception& e) {
      std::cerr << "balancenet: error: serving the job's store failed: " << firstLine(e.what()) << std::endl;
      return 1;
    }
    if (!finished) {
      std::cerr << "balancenet: error: every worker of the job stopped before it finished" << std::endl;
      return 1;
    }
    std::cerr << "balancenet: done; the job finished on the other hosts (results in rank 0's run directory)"
              << std::endl;
    return 0;
  }

  // Names each new death, and starts the dead workers again while --max-restarts allows.
  void goOnWithout() {
    std::vector<int> restarts;
    for (auto& child : children_) {
      if (child.running || child.reported) continue;
      child.reported = true;
      const std::string goesOn =
          c_.federated ? "the federated run goes on without it"
                       : fmt::format("the job goes on with {} workers (--elastic)", runningWorkers(children_));
      std::cerr << fmt::format("balancenet: {} (pid {}) {}; {}", child.role, child.pid, describeExit(child.status),
                               goesOn)
                << std::endl;
      if (restartsLeft_ > 0 && !finishedAt_) {
        --restartsLeft_;
        restarts.push_back(child.rank);
      }
    }
    for (int rank : restarts) {
      startWorker(rank, /*joining=*/true);
      std::cerr << fmt::format("balancenet: restarted {} (pid {}); it joins at a {} boundary ({} restarts left)",
                               roleOf(rank), children_.back().pid, c_.federated ? "round" : "step", restartsLeft_)
                << std::endl;
    }
  }

  // Every worker stops, and the job starts again from its newest checkpoint (from the start when it has none
  // yet), its workers meeting under fresh store keys (attempt N: the dead attempt's claims stay behind).
  void restartTheJob(const Child& failure) {
    --restartsLeft_;
    ++attempt_;
    std::cerr << fmt::format(
                     "balancenet: {} (pid {}) {}; a pipeline cannot go on without it: restarting the whole job from "
                     "its newest checkpoint (attempt {}, {} restarts left)",
                     failure.role, failure.pid, describeExit(failure.status), attempt_, restartsLeft_)
              << std::endl;
    stopAll(children_);
    children_.clear();
    const checkpoint::CheckpointStore store(c_.checkpoint.dir, c_.checkpoint.keep);
    if (!store.files().empty()) resumes_ = true;
    startAll();
  }

  // Stops the rest and names the cause in one line; exit code 2 when the cause was bad input, else 1.
  int stopAfterFailure(Child* failure) {
    const bool elastic = c_.resilience.elastic;
    // A user's program has no stall watchdog naming the missing ranks: its peers would wait for ever, so they are
    // stopped at once (as torchrun does) and the first failure is the cause.
    const bool program = c_.program.given();
    Child* cause = elastic || program ? failure : settleFailure(children_, failure);
    // A worker still there after the others gave up on it is the stalled one.
    const Child* stalled = nullptr;
    for (const auto& child : children_)
      if (!elastic && !program && !WIFSIGNALED(cause->status) && child.running && child.worker) stalled = &child;
    std::string why =
        stalled ? fmt::format("{} (pid {}) stopped responding (its peers gave up waiting)", stalled->role, stalled->pid)
                : fmt::format("{} (pid {}) {}", cause->role, cause->pid, describeExit(cause->status));
    const std::string own = !cause->lastError.empty() ? cause->lastError : (program ? cause->lastLine : "");
    if (!stalled && !own.empty()) why += ": " + own;
    stopAll(children_);
    std::string remain;
    if (elastic)
      remain = c_.launch.nnodes > 1
                   ? "; no worker of this host remains; the job goes on without it while "
                     "--min-workers remain on the other hosts"
                   : fmt::format("; fewer than --min-workers {} workers remain", c_.resilience.minNodes);
    std::cerr << "balancenet: error: " << why << remain << "; stopped the other workers" << std::endl;
    return stopExitCode(Death::of(cause->status, cause->rank));
  }

  // A worker dropped while stopped (SIGSTOP) would wait for ever once the others are done.
  void stopStragglersAfterTheEnd() {
    const auto grace = c_.resilience.peerTimeout + std::chrono::seconds(10);
    if (!finishedAt_ || std::chrono::steady_clock::now() - *finishedAt_ <= grace) return;
    for (auto& child : children_)
      if (child.running)
        std::cerr << fmt::format("balancenet: {} (pid {}) did not finish with the others; stopping it", child.role,
                                 child.pid)
                  << std::endl;
    stopAll(children_);
  }

  const JobConfig& c_;
  const JobShape shape_;
  const int port_;
  std::vector<Child> children_;
  int restartsLeft_;
  int attempt_ = 0;                                                  // whole-job restarts so far (pipelines)
  bool resumes_ = false;                                             // restarted processes resume (--resume)
  std::optional<std::chrono::steady_clock::time_point> finishedAt_;  // elastic: a worker completed the job
};

}  // namespace

int launchLocalWorkers(const JobConfig& config, const ResolveForHosts& againForTheHosts) {
  ensureDirectory(config.trainer.runDir);
  JobConfig c = config;  // the store fills in c.launch.storeFile, and the hosts' meeting c.launch.hostWorkers
  JobStore store = openJobStore(c);
  // The hosts run another world than this launcher assumed (only defaults depended on it, HostMeeting.h): the
  // job is resolved again for it, with what the store settled.
  if (againForTheHosts && c.launch.worldSize() != config.launch.worldSize()) {
    JobConfig again = againForTheHosts(c);
    again.launch = c.launch;
    again.trainer.runDir = c.trainer.runDir;
    again.trainer.progressSeconds = c.trainer.progressSeconds;
    c = again;
  }
  catchStopSignals();
  Supervisor supervisor(c, store.port);
  try {
    supervisor.startAll();
    return supervisor.superviseUntilDone();
  } catch (const RuntimeFailure& e) {
    // A process that could not be started (at the start or a restart: fork or pipe refused by a process or
    // open-file limit) ends the job with one line that says what became of the others.
    const int stopped = supervisor.stopRunning();
    if (stopped == 0) throw;
    throw RuntimeFailure(fmt::format("{}; stopped the {} process{} already started", firstLine(e.what()), stopped,
                                     stopped == 1 ? "" : "es"));
  }
}

}  // namespace balancenet::launch
