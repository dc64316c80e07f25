// The torchrun variables a launched program's workers get.
#include "balancenet/launch/ProgramEnvironment.h"

#include <filesystem>

#include <fmt/format.h>

#include "balancenet/core/EnvironmentVariables.h"
#include "balancenet/job/JobRendezvous.h"

namespace balancenet::launch {
namespace {

// "runs/20260101-120000-42/" -> "20260101-120000-42".
std::string runId(const std::string& runDir) {
  auto path = std::filesystem::path(runDir).lexically_normal();
  if (!path.has_filename()) path = path.parent_path();
  return path.filename().string();
}

bool hasVariable(const std::vector<std::string>& environment, const std::string& name) {
  for (const auto& entry : environment)
    if (entry.rfind(name + "=", 0) == 0) return true;
  return false;
}

// <build>/python beside <build>/apps/balancenet, when the package was built there, or
// <prefix>/lib/python3/dist-packages beside an installed <prefix>/bin/balancenet (cmake --install, the .deb).
std::string packageDirectory() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const auto above = exe.parent_path().parent_path();
  for (const auto& dir : {above / "python", above / "lib" / "python3" / "dist-packages"})
    if (std::filesystem::exists(dir / "balancenet" / "torch.py", ec)) return dir.string();
  return "";
}

}  // namespace

std::vector<std::string> withPackageOnPythonPath(std::vector<std::string> inherited) {
  const std::string dir = packageDirectory();
  if (dir.empty()) return inherited;
  const std::string prefix = std::string(kPythonPathVar) + "=";
  for (auto& entry : inherited)
    if (entry.rfind(prefix, 0) == 0) {
      const std::string old = entry.substr(prefix.size());
      entry = prefix + dir + (old.empty() ? "" : ":" + old);
      return inherited;
    }
  inherited.push_back(prefix + dir);
  return inherited;
}

std::vector<std::string> programVariables(const job::JobConfig& c, int restarts,
                                          const std::vector<std::string>& inherited) {
  std::vector<std::string> env{
      fmt::format("{}={}", kGroupRankVar, c.launch.nodeRank),
      fmt::format("{}={}", kRestartCountVar, restarts),
      fmt::format("{}={}", kMaxRestartsVar, c.resilience.maxRestarts),
      fmt::format("{}={}", kRunIdVar, runId(c.trainer.runDir)),
      fmt::format("{}=True", kUseAgentStoreVar),  // Python's str(True), what torch compares with
  };
  // The user's own OMP_NUM_THREADS wins, as under torchrun.
  if (!hasVariable(inherited, kOmpThreadsVar)) env.push_back(fmt::format("{}={}", kOmpThreadsVar, c.threads));
  // The script's own init_process_group("gloo") listens where balancenet's session does: without it Gloo
  // advertises what the host's name resolves to (127.0.0.1 in containers and namespaces) and the job times out.
  if (!hasVariable(inherited, kGlooIfaceVar)) {
    const std::string iface = job::rendezvousOptions(c).iface;
    if (!iface.empty()) env.push_back(fmt::format("{}={}", kGlooIfaceVar, iface));
  }
  return env;
}

}  // namespace balancenet::launch
