// Process supervision with fork/exec, pipes and poll. Workers die with the launcher (PR_SET_PDEATHSIG),
// so no orphan survives even a SIGKILL of the launcher.
#include "balancenet/launch/LocalLauncher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <iostream>
#include <numeric>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "balancenet/checkpoint/CheckpointStore.h"
#include "balancenet/comm/JobAdmission.h"
#include "balancenet/comm/JobToken.h"
#include "balancenet/comm/Rendezvous.h"
#include "balancenet/core/AtomicFile.h"
#include "balancenet/core/Error.h"
#include "balancenet/core/PrivateDirectory.h"
#include "balancenet/elastic/Membership.h"
#include "balancenet/job/JobRendezvous.h"
#include "balancenet/launch/HostMeeting.h"
#include "balancenet/launch/ProgramEnvironment.h"
#include "balancenet/launch/WorkerEnvironment.h"

extern char** environ;

namespace balancenet::launch {
using job::JobConfig;
using job::rendezvousOptions;
namespace {

volatile std::sig_atomic_t gStopSignal = 0;  // SIGINT or SIGTERM, once one arrived
void onStopSignal(int signal) { gStopSignal = signal; }

struct Child {
  std::string name;  // "rank 3" or "server 0": the output prefix
  std::string role;  // "worker rank 3" or "parameter server 0": how errors name it
  pid_t pid = -1;
  int outFd = -1;  // stdout and stderr share one pipe so lines keep their order
  std::string pending;
  std::string lastError;  // its last "balancenet: error: " line, without the prefix: the cause, when it fails
  std::string lastLine;   // its last non-empty line (a user's program: a Python traceback ends with the exception)
  bool running = true;
  int status = 0;
  bool reported = false;  // its death was handled (elastic jobs go on without it)
  bool worker = true;     // false: a parameter server
  int rank = -1;
};

// What this launcher inherited, to pass on (without the variables that say who a process is).
std::vector<std::string> inheritedEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  return env;
}

// Starts `executable` with `args` (argv[0] first) and `envStrings`, its output into a pipe.
Child spawn(const std::string& executable, std::vector<std::string> args, std::string name, std::string role,
            std::vector<std::string> envStrings) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw RuntimeFailure(fmt::format("could not start {}: pipe: {}", role, std::strerror(errno)));
  // Everything exec needs is built before fork: only async-signal-safe calls may follow it.
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& e : envStrings) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t parent = ::getpid();

  pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;  // before the clean-up's calls
    ::close(fds[0]);
    ::close(fds[1]);
    throw RuntimeFailure(fmt::format("could not start {}: fork: {}", role, std::strerror(err)));
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    ::dup2(fds[1], STDOUT_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    ::signal(SIGINT, SIG_DFL);
    ::execve(executable.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  Child child;
  child.name = std::move(name);
  child.role = std::move(role);
  child.pid = pid;
  child.outFd = fds[0];
  return child;
}

// torch 2.x prefixes what a process of a group prints on its way out with "[rankN]: " (its excepthook); the
// worker's name already says which rank it is.
std::string withoutTorchRankPrefix(const std::string& line) {
  if (line.rfind("[rank", 0) != 0) return line;
  const auto end = line.find("]: ");
  const bool digits = end != std::string::npos && end > 5 && line.find_first_not_of("0123456789", 5) == end;
  return digits ? line.substr(end + 3) : line;
}

void forwardLine(Child& c, const std::string& line) {
  constexpr const char* kError = "balancenet: error: ";
  if (line.rfind(kError, 0) == 0) c.lastError = line.substr(std::strlen(kError));
  if (line.find_first_not_of(" \t\r") != std::string::npos) c.lastLine = withoutTorchRankPrefix(line);
  std::cerr << "[" << c.name << "] " << line << "\n";
}

void forwardLines(Child& c, bool flushAll) {
  size_t nl;
  while ((nl = c.pending.find('\n')) != std::string::npos) {
    forwardLine(c, c.pending.substr(0, nl));
    c.pending.erase(0, nl + 1);
  }
  if (flushAll && !c.pending.empty()) {
    forwardLine(c, c.pending);
    c.pending.clear();
  }
  std::cerr.flush();
}

// Reads whatever the workers printed, waiting at most timeoutMs.
void pumpOutput(std::vector<Child>& children, int timeoutMs) {
  std::vector<pollfd> fds;
  std::vector<Child*> owners;
  for (auto& c : children)
    if (c.outFd >= 0) {
      fds.push_back({c.outFd, POLLIN, 0});
      owners.push_back(&c);
    }
  if (fds.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(timeoutMs));
    return;
  }
  if (::poll(fds.data(), fds.size(), timeoutMs) <= 0) return;
  char buf[65536];
  for (size_t i = 0; i < fds.size(); ++i) {
    if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
    if (n > 0) {
      owners[i]->pending.append(buf, n);
      forwardLines(*owners[i], false);
    } else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
      forwardLines(*owners[i], true);
      ::close(owners[i]->outFd);
      owners[i]->outFd = -1;
    }
  }
}

std::string describeExit(int status) {
  if (WIFSIGNALED(status))
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return fmt::format("exited with code {}", WEXITSTATUS(status));
}

bool failed(int status) { return WIFSIGNALED(status) || WEXITSTATUS(status) != 0; }

// Reaps finished workers; returns the first failure of this pass (a signal death first: it is the
// cause, the peers' broken-connection errors are the effect).
Child* reap(std::vector<Child>& children) {
  Child* failure = nullptr;
  for (auto& c : children) {
    if (!c.running) continue;
    int status = 0;
    if (::waitpid(c.pid, &status, WNOHANG) == c.pid) {
      c.running = false;
      c.status = status;
      if (failed(status) && (!failure || (WIFSIGNALED(status) && !WIFSIGNALED(failure->status)))) failure = &c;
    }
  }
  return failure;
}

bool anyRunning(const std::vector<Child>& children) {
  for (const auto& c : children)
    if (c.running || c.outFd >= 0) return true;
  return false;
}

void stopAll(std::vector<Child>& children) {
  for (auto& c : children)
    if (c.running) {
      ::kill(c.pid, SIGTERM);
      ::kill(c.pid, SIGCONT);  // a stopped worker (SIGSTOP) would hold SIGTERM until then
    }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (anyRunning(children) && std::chrono::steady_clock::now() < deadline) {
    pumpOutput(children, 50);
    reap(children);
  }
  for (auto& c : children)
    if (c.running) {
      ::kill(c.pid, SIGKILL);
      ::waitpid(c.pid, &c.status, 0);
      c.running = false;
    }
  for (auto& c : children) {
    if (c.outFd >= 0) ::close(c.outFd);
    c.outFd = -1;
  }
}

// After the first failure the other workers get a moment to exit on their own (their stall reports
// name the missing ranks); the cause is a signal death if there is one: the others' errors are its effect.
Child* settleFailure(std::vector<Child>& children, Child* first) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(6);
  Child* cause = first;
  auto othersRunning = [&] {
    for (const auto& c : children)
      if (c.running && c.worker) return true;
    return false;
  };
  while (othersRunning() && std::chrono::steady_clock::now() < deadline) {
    pumpOutput(children, 50);
    if (Child* f = reap(children); f && WIFSIGNALED(f->status) && !WIFSIGNALED(cause->status)) cause = f;
  }
  return cause;
}

int runningWorkers(const std::vector<Child>& children) {
  int n = 0;
  for (const auto& c : children) n += c.running && c.worker;
  return n;
}

constexpr const char* kJoinStoreFile = "join-store";
constexpr const char* kSelf = "/proc/self/exe";  // train's and federate's workers are this binary

// A worker started later with --join finds a single-machine elastic job through its store file.
void announceJoinStore(const std::string& storeFile, const std::string& runDir) {
  writeFileAtomically(runDir + "/" + kJoinStoreFile, storeFile + "\n");
  spdlog::info(
      "more workers can join this job: balancenet train --join --store-file {} (and the job's flags; "
      "the path is also in {}/{})",
      storeFile, runDir, kJoinStoreFile);
}

// The job's store: a private file (one host), a TCP server (host 0), or nothing here but a check that
// host 0's store admits this host. Lives as long as the workers.
struct JobStore {
  std::unique_ptr<PrivateDirectory> dir;
  std::unique_ptr<comm::StoreServer> server;
  int port = 0;  // what the children connect to; 0: the file
};

// Several hosts: host 0 serves the store; every host's launcher meets the others there (HostMeeting.h) and learns
// the world and its first rank before any worker starts. Host 0 publishes the world its workers check.
void meetTheOtherHosts(JobConfig& c, comm::RendezvousOptions rv, JobStore& store) {
  if (c.launch.nodeRank == 0) {
    rv.worldSize = 0;  // known after the meeting
    store.server = std::make_unique<comm::StoreServer>(rv);
    store.port = rv.masterPort = store.server->port();
  }
  const auto job = comm::admitLauncher(rv);  // a wrong token: one line here, before any worker starts
  meetHosts(*job, fmt::format("{}:{}", rv.masterAddr, rv.masterPort), c.launch, rv.timeout);
  if (c.launch.nodeRank == 0) comm::publishWorldSize(*job, c.launch.worldSize());
  spdlog::info("hosts: {} workers ({} by node rank); this host runs ranks {}-{}", c.launch.worldSize(),
               job::workersPerHostText(c.launch.hostWorkers), c.launch.firstRank(),
               c.launch.firstRank() + c.launch.nprocPerNode - 1);
}

JobStore openJobStore(JobConfig& c) {
  JobStore store;
  // torch's env:// needs a TCPStore, so a launched program's job serves one even on one host; its port is open
  // to every interface, so a job token the launcher makes up keeps the job's own keys from strangers there.
  if (c.program.given() && c.launch.nnodes == 1 && c.launch.jobToken.empty())
    c.launch.jobToken = comm::randomJobToken();
  comm::RendezvousOptions rv = rendezvousOptions(c);
  store.port = c.launch.masterPort;
  if (c.launch.nnodes == 1 && !c.program.given()) {
    // Every worker is on this host: they meet through a file only this user can reach, so the job
    // opens no store port (c10d's TCPStore would listen on every interface) and Gloo stays on loopback.
    if (c.launch.masterPort != 0)
      spdlog::warn(
          "--master-port {} is not used: the workers of a single-host job meet through a private store "
          "file",
          c.launch.masterPort);
    store.dir = std::make_unique<PrivateDirectory>("balancenet-store");
    c.launch.storeFile = rv.storeFile = store.dir->file("store");
    store.server = std::make_unique<comm::StoreServer>(rv);
    if (c.resilience.elastic) announceJoinStore(c.launch.storeFile, c.trainer.runDir);
  } else {
    meetTheOtherHosts(c, rv, store);
  }
  return store;
}

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
  Supervisor(const JobConfig& c, int port) : c_(c), port_(port), restartsLeft_(c.resilience.maxRestarts) {
    // Resolved once here so every worker writes to the same place and reports progress the same way.
    extraArgs_ = {"--run-dir", c_.trainer.runDir, "--progress-seconds", fmt::format("{}", c_.trainer.progressSeconds)};
    // Every host's count, as the hosts agreed: the workers (and servers) check their flags against the real world.
    if (!c_.launch.hostWorkers.empty())
      extraArgs_.insert(extraArgs_.end(), {"--nproc-per-node", job::workersPerHostText(c_.launch.hostWorkers)});
  }

  void startAll() {
    for (int local = 0; local < c_.launch.nprocPerNode; ++local)
      startWorker(c_.launch.firstRank() + local, /*joining=*/false);
    // Parameter servers run beside host 0's workers, supervised like them.
    for (int k = 0; c_.launch.nodeRank == 0 && k < c_.comm.servers; ++k) {
      children_.push_back(spawn(kSelf, withExtraArgs(), fmt::format("server {}", k),
                                fmt::format("parameter server {}", k),
                                childEnvironment(inheritedEnvironment(), c_.launch, port_, serverIdentity(k))));
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
      if (failure && survivable(*failure)) {
        goOnWithout();
        continue;
      }
      if (failure && restartsTheJob(*failure)) {
        restartTheJob(*failure);
        continue;
      }
      if (failure && servesTheStoreAlone(*failure)) return serveTheStoreUntilTheJobEnds(*failure);
      if (failure) return stopAfterFailure(failure);
      stopStragglersAfterTheEnd();
    }
    std::cerr << "balancenet: done; results in " << c_.trainer.runDir << std::endl;
    return 0;
  }

 private:
  void startWorker(int rank, bool joining) {
    const int local = rank - c_.launch.firstRank();
    auto identity = workerIdentity(c_.launch, rank, local, joining);
    if (attempt_ > 0) identity.push_back(fmt::format("{}={}", kAttemptVar, attempt_));
    const auto name = fmt::format("rank {}", rank);
    if (!c_.program.given()) {
      children_.push_back(spawn(kSelf, withExtraArgs(), name, roleOf(rank),
                                childEnvironment(inheritedEnvironment(), c_.launch, port_, identity)));
    } else {
      // A user's program reads its flags from the environment: the launch words, with what was resolved here.
      const auto inherited = withPackageOnPythonPath(inheritedEnvironment());
      const auto more = programVariables(c_, c_.resilience.maxRestarts - restartsLeft_, withExtraArgs(), inherited);
      identity.insert(identity.end(), more.begin(), more.end());
      children_.push_back(spawn(c_.program.executable, c_.program.argv, name, roleOf(rank),
                                childEnvironment(inherited, c_.launch, port_, identity)));
    }
    children_.back().rank = rank;
  }

  // This binary's words for a worker, or a launched program's launch flags: as given, then the resolved ones.
  std::vector<std::string> withExtraArgs() const {
    std::vector<std::string> args = c_.argv;
    args.insert(args.end(), extraArgs_.begin(), extraArgs_.end());
    return args;
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

  // Elastic: a death is one line, not the end, while enough workers remain (bad input ends the job anyway).
  // A launcher of a job over several hosts sees only its own workers: the workers count the job's.
  static bool badInput(const Child& failure) {
    return !WIFSIGNALED(failure.status) && WEXITSTATUS(failure.status) == 2;
  }

  bool survivable(const Child& failure) const {
    // A federated client's death leaves it out of rounds (the server goes on); the server's ends the job.
    if (c_.federated) return failure.rank != 0 && !badInput(failure);
    const int enough = c_.launch.nnodes > 1 ? 1 : c_.resilience.minNodes;
    return c_.resilience.elastic && !badInput(failure) && runningWorkers(children_) >= enough;
  }

  // Host 0 of an elastic job over several hosts, its own workers all dead: the other hosts' workers still
  // need the store it serves, to re-form without them and to go on.
  bool servesTheStoreAlone(const Child& failure) const {
    return c_.resilience.elastic && c_.launch.nnodes > 1 && c_.launch.nodeRank == 0 && !badInput(failure) &&
           runningWorkers(children_) == 0;
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

  // Pipeline stages cannot go on without one of theirs (validation allows --max-restarts there only with
  // --checkpoint-dir, on one host).
  bool restartsTheJob(const Child& failure) const {
    return c_.pipeline.enabled() && !badInput(failure) && restartsLeft_ > 0 && !finishedAt_;
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
    if (!c_.checkpoint.resume && !resumes_ && !store.files().empty()) {
      extraArgs_.push_back("--resume");
      resumes_ = true;
    }
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
    const bool causeBadInput = !WIFSIGNALED(cause->status) && WEXITSTATUS(cause->status) == 2;
    stopAll(children_);
    std::string remain;
    if (elastic)
      remain = c_.launch.nnodes > 1
                   ? "; no worker of this host remains; the job goes on without it while "
                     "--min-workers remain on the other hosts"
                   : fmt::format("; fewer than --min-workers {} workers remain", c_.resilience.minNodes);
    std::cerr << "balancenet: error: " << why << remain << "; stopped the other workers" << std::endl;
    return causeBadInput ? 2 : 1;
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
  const int port_;
  std::vector<std::string> extraArgs_;
  std::vector<Child> children_;
  int restartsLeft_;
  int attempt_ = 0;                                                  // whole-job restarts so far (pipelines)
  bool resumes_ = false;                                             // a restart added --resume to the workers' flags
  std::optional<std::chrono::steady_clock::time_point> finishedAt_;  // elastic: a worker completed the job
};

}  // namespace

int launchLocalWorkers(const JobConfig& config) {
  ensureDirectory(config.trainer.runDir);
  JobConfig c = config;  // the store fills in c.launch.storeFile
  JobStore store = openJobStore(c);
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
