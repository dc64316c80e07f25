// Testbed: a small cluster for one test, made by scripts/testbed.sh (namespaces with their own addresses on
// a bridge, per-host CPU quotas, shaped links) and removed when the object goes.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "testing/ProcessRunner.h"

namespace balancenet::testing {

class Testbed {
 public:
  // Why this machine cannot make a testbed (not root, no namespaces, no cgroup cpu controller), or nothing.
  static std::optional<std::string> unavailableReason();

  // Brings up one host per entry of `cpus` (quota in cores, "none" for no cap), each link shaped to
  // `rateMbit[i]` Mbit/s where given (0: unshaped). Throws std::runtime_error with the script's output.
  explicit Testbed(const std::vector<std::string>& cpus, const std::vector<int>& rateMbit = {});
  ~Testbed();
  Testbed(const Testbed&) = delete;
  Testbed& operator=(const Testbed&) = delete;

  int hosts() const { return hosts_; }
  const std::string& name() const { return name_; }
  std::string address(int host) const;
  // `argv` run as `host` (in its namespace and CPU cgroup): prepend to a command line.
  std::vector<std::string> asHost(int host, const std::vector<std::string>& argv) const;
  // The testbed's own commands (set-cpu, set-rate, cut, heal, throttled, status...); throws if it fails.
  std::string control(const std::vector<std::string>& args) const;
  // The processes running as `host` (in its namespace or its CPU cgroup).
  std::vector<pid_t> processes(int host) const;
  // What of this testbed is left on the machine (empty after down).
  std::string leftovers() const;

  static std::string script();  // path of scripts/testbed.sh

 private:
  std::string name_;
  std::string subnet_;
  int hosts_ = 0;
};

// Runs the testbed script with `args`; the result of the process.
ProcessResult runTestbedScript(const std::vector<std::string>& args, ProcessOptions options);
ProcessResult runTestbedScript(const std::vector<std::string>& args, double timeoutSeconds = 60);

}  // namespace balancenet::testing
