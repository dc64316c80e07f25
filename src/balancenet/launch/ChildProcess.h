// ChildProcess: the launcher's processes as it sees them: fork/exec with the output into a pipe, each line forwarded
// with the process's name, reaped without blocking, and stopped (SIGTERM, then SIGKILL). Workers die with the
// launcher (PR_SET_PDEATHSIG), so no orphan survives even a SIGKILL of the launcher.
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

namespace balancenet::launch {

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

// What this launcher inherited, to pass on (childEnvironment filters out the variables that say who a process is).
std::vector<std::string> inheritedEnvironment();

// Starts `executable` with `args` (argv[0] first) and `envStrings`, its output into a pipe. A fork or pipe refused
// (a process or open-file limit) is a RuntimeFailure naming `role`.
Child spawn(const std::string& executable, std::vector<std::string> args, std::string name, std::string role,
            std::vector<std::string> envStrings);

// torch 2.x prefixes what a process of a group prints on its way out with "[rankN]: " (its excepthook); the
// worker's name already says which rank it is.
std::string withoutTorchRankPrefix(const std::string& line);

// Reads whatever the children printed, waiting at most timeoutMs, and forwards each whole line as "[name] line".
void pumpOutput(std::vector<Child>& children, int timeoutMs);

std::string describeExit(int status);  // "exited with code 1", "was killed by signal 9 (Killed)"
bool failed(int status);               // a signal or a non-zero exit

// Reaps finished children; returns the first failure of this pass (a signal death first: it is the cause, the
// peers' broken-connection errors are the effect).
Child* reap(std::vector<Child>& children);
bool anyRunning(const std::vector<Child>& children);  // running, or its output not read to the end
int runningWorkers(const std::vector<Child>& children);

// SIGTERM to every running child, SIGKILL to those still there 5 s later; their output read to the end.
void stopAll(std::vector<Child>& children);

// After the first failure the other workers get a moment to exit on their own (their stall reports name the
// missing ranks); the cause is a signal death if there is one: the others' errors are its effect.
Child* settleFailure(std::vector<Child>& children, Child* first);

}  // namespace balancenet::launch
