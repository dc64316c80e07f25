// Process plumbing with fork/exec, pipes and poll.
#include "balancenet/launch/ChildProcess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "balancenet/core/Error.h"

extern char** environ;

namespace balancenet::launch {

std::vector<std::string> inheritedEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  return env;
}

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

std::string withoutTorchRankPrefix(const std::string& line) {
  if (line.rfind("[rank", 0) != 0) return line;
  const auto end = line.find("]: ");
  const bool digits = end != std::string::npos && end > 5 && line.find_first_not_of("0123456789", 5) == end;
  return digits ? line.substr(end + 3) : line;
}

namespace {

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

}  // namespace

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

}  // namespace balancenet::launch
