// Looking up an executable like execvp, before any worker starts, so a typo is one line and not N exec failures.
#include "balancenet/cli/ProgramPath.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::cli {
namespace {

// The Python whose torch balancenet was built against (cmake/TorchFromPython.cmake): its workers can import
// balancenet.torch. A pip install into a user's venv builds against that venv's python.
constexpr const char* kBuildPython = BALANCENET_BUILD_PYTHON;

bool isExecutableFile(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

std::optional<std::string> onPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (isExecutableFile(candidate)) return std::filesystem::absolute(candidate).string();
  }
  return std::nullopt;
}

// An executable file that Python should not run: a native binary (ELF's magic number) or a script whose #! line
// names another interpreter (a shell script). A Python script, with or without #!, is Python's.
bool runsOnItsOwn(const std::string& path) {
  if (!isExecutableFile(path)) return false;
  std::ifstream in(path, std::ios::binary);
  std::string first;
  std::getline(in, first);
  const std::string elfMagic = std::string(1, '\x7f') + "ELF";
  if (first.rfind(elfMagic, 0) == 0) return true;
  return first.rfind("#!", 0) == 0 && first.find("python") == std::string::npos;
}

}  // namespace

std::string findExecutable(const std::string& name, const std::string& what) {
  if (name.find('/') == std::string::npos) {
    if (auto found = onPath(name)) return *found;
    throw UsageError(fmt::format("{} '{}': no such executable on PATH", what, name));
  }
  std::error_code ec;
  require(std::filesystem::exists(name, ec), fmt::format("{} {}: no such file", what, name));
  require(isExecutableFile(name), fmt::format("{} {}: not an executable file", what, name));
  return std::filesystem::absolute(name).string();
}

ProgramKind programKind(const std::string& word) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(word, ec))
    return runsOnItsOwn(word) ? ProgramKind::Executable : ProgramKind::PythonScript;
  if (word.find('/') == std::string::npos && onPath(word)) return ProgramKind::Executable;
  throw UsageError(
      fmt::format("script {}: no such file (to run a program that is not a Python script, give --no-python)", word));
}

// The program installed into a virtual environment (a wheel: <venv>/bin/balancenet): that venv's Python, whose
// site-packages hold the package, before the one the program was built with elsewhere.
std::optional<std::string> venvPython() {
  std::error_code ec;
  const auto bin = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  if (ec || !std::filesystem::exists(bin.parent_path() / "pyvenv.cfg", ec)) return std::nullopt;
  const auto python = (bin / "python3").string();
  return isExecutableFile(python) ? std::optional<std::string>(python) : std::nullopt;
}

std::string findPython(const std::string& given) {
  if (!given.empty()) return findExecutable(given, "--python");
  if (auto installed = venvPython()) return *installed;
  if (isExecutableFile(kBuildPython)) return kBuildPython;
  if (auto found = onPath("python3")) return *found;
  throw UsageError(fmt::format("no python3: neither {} nor python3 on PATH; give --python PATH", kBuildPython));
}

}  // namespace balancenet::cli
