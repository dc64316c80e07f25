// Running this program once per compared run, and naming the runs.
#include "balancenet/cli/CompareRuns.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::cli {

std::vector<Variant> parseVariants(const std::vector<std::string>& specs) {
  if (specs.empty()) return {{"", {}}};
  std::vector<Variant> out;
  for (const auto& spec : specs) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError(fmt::format("--variant '{}' is not NAME=FLAGS (e.g. 'ssp=--comm ps --staleness 2')", spec));
    Variant v{spec.substr(0, eq), {}};
    std::istringstream words(spec.substr(eq + 1));
    for (std::string w; words >> w;) v.flags.push_back(w);
    out.push_back(v);
  }
  return out;
}

std::string runLabel(const std::string& item, const Variant& variant, size_t items) {
  if (variant.name.empty()) return item;
  return items == 1 ? variant.name : item + "-" + variant.name;
}

int runSelf(const std::string& self, const std::vector<std::string>& args, const std::string& logPath) {
  std::vector<std::string> all{self};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int log = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log < 0) throw RuntimeFailure(fmt::format("cannot write {}", logPath));
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(log);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

void runCompared(const std::string& self, const std::vector<std::string>& args, const std::string& logPath,
                 const std::string& what) {
  const int rc = runSelf(self, args, logPath);
  if (rc == 0) return;
  std::cerr << "\n";
  throw RuntimeFailure(fmt::format("{} failed (exit {}): {} (log: {})", what, rc, lastLine(logPath), logPath));
}

bool hasFlag(const std::vector<std::string>& flags, const std::string& name) {
  for (const auto& f : flags)
    if (f == name || f.rfind(name + "=", 0) == 0) return true;
  return false;
}

std::string lastLine(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

std::string defaultCompareOutDir() {
  char stamp[32];
  std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return fmt::format("runs/compare-{}", stamp);
}

}  // namespace balancenet::cli
