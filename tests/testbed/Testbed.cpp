#include "Testbed.h"

#include <unistd.h>

#include <sstream>
#include <stdexcept>

namespace balancenet::testing {

std::string Testbed::script() { return std::string(BALANCENET_SOURCE_DIR) + "/scripts/testbed.sh"; }

ProcessResult runTestbedScript(const std::vector<std::string>& args, ProcessOptions options) {
  std::vector<std::string> argv{"/bin/bash", Testbed::script()};
  argv.insert(argv.end(), args.begin(), args.end());
  return runProcess(argv, options);
}

ProcessResult runTestbedScript(const std::vector<std::string>& args, double timeoutSeconds) {
  ProcessOptions o;
  o.timeoutSeconds = timeoutSeconds;
  return runTestbedScript(args, o);
}

std::optional<std::string> Testbed::unavailableReason() {
  const auto r = runTestbedScript({"check"});
  if (r.exitCode == 0) return std::nullopt;
  auto why = r.output;
  while (!why.empty() && why.back() == '\n') why.pop_back();
  return why.empty() ? "scripts/testbed.sh check failed" : why;
}

// Unique per test process, so that tests run in parallel (ctest -j) each have their own bridge and names.
Testbed::Testbed(const std::vector<std::string>& cpus, const std::vector<int>& rateMbit)
    : name_("t" + std::to_string(getpid() % 10000000)),
      subnet_("10.214." + std::to_string(getpid() % 250)),
      hosts_(static_cast<int>(cpus.size())) {
  std::string cpuList, rateList;
  for (size_t i = 0; i < cpus.size(); ++i) cpuList += (i ? "," : "") + cpus[i];
  for (size_t i = 0; i < rateMbit.size(); ++i) rateList += (i ? "," : "") + std::to_string(rateMbit[i]);
  std::vector<std::string> args{"--name", name_, "--subnet", subnet_, "up", std::to_string(hosts_), "--cpu", cpuList};
  if (!rateList.empty()) args.insert(args.end(), {"--rate-mbit", rateList});
  // A testbed left by a crashed earlier run of a test with the same pid would make `up` refuse.
  runTestbedScript({"--name", name_, "down"});
  const auto r = runTestbedScript(args);
  if (r.exitCode != 0) throw std::runtime_error("testbed up failed: " + r.output);
}

Testbed::~Testbed() { runTestbedScript({"--name", name_, "down"}); }

std::string Testbed::address(int host) const { return subnet_ + "." + std::to_string(host + 1); }

std::vector<std::string> Testbed::asHost(int host, const std::vector<std::string>& argv) const {
  std::vector<std::string> out{"/bin/bash", script(), "--name", name_,
                               "--subnet",  subnet_,  "run",    std::to_string(host)};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::string Testbed::control(const std::vector<std::string>& args) const {
  std::vector<std::string> full{"--name", name_, "--subnet", subnet_};
  full.insert(full.end(), args.begin(), args.end());
  const auto r = runTestbedScript(full);
  if (r.exitCode != 0) throw std::runtime_error("testbed " + args.front() + " failed: " + r.output);
  return r.output;
}

std::vector<pid_t> Testbed::processes(int host) const {
  // The script names host I's namespace NAME-hI; `run` enters it, so every process of the host is there.
  const auto r = runProcess({"/bin/sh", "-c", "ip netns pids " + name_ + "-h" + std::to_string(host)});
  std::vector<pid_t> pids;
  std::istringstream in(r.output);
  for (pid_t pid; in >> pid;) pids.push_back(pid);
  return pids;
}

std::string Testbed::leftovers() const { return runTestbedScript({"--name", name_, "leftovers"}).output; }

}  // namespace balancenet::testing
