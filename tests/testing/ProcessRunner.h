// ProcessRunner: runs the balancenet binary (or any program) as a real process, with a deadline.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <sys/types.h>

namespace balancenet::testing {

struct ProcessResult {
  int exitCode = -1;      // exit status, or 128 + signal
  bool timedOut = false;  // killed because the deadline passed (the test should fail: a hang)
  std::string output;     // stdout and stderr together
  double seconds = 0;
};

struct ProcessOptions {
  std::map<std::string, std::string> env;  // added to (or replacing in) the current environment
  double timeoutSeconds = 120;
  // Called every ~50 ms with the child's pid while it runs (e.g. to kill a worker); may be empty.
  std::function<void(pid_t, double elapsedSeconds)> whileRunning;
  // Called when output arrives, with all of it so far (e.g. to time when a line appeared); may be empty.
  std::function<void(const std::string& output, double elapsedSeconds)> onOutput;
};

ProcessResult runProcess(const std::vector<std::string>& argv, const ProcessOptions& options = {});

// Direct children of pid (from /proc), e.g. the workers a launcher started.
std::vector<pid_t> childrenOf(pid_t pid);
bool processAlive(pid_t pid);

// A TCP port that was free a moment ago (bound to port 0 on loopback, then released).
int freePort();

}  // namespace balancenet::testing
