// mkdtemp creates the directory with mode 0700 atomically: no window where another user could enter it.
#include "balancenet/core/PrivateDirectory.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "balancenet/core/EnvironmentVariables.h"
#include "balancenet/core/Error.h"

namespace balancenet {

PrivateDirectory::PrivateDirectory(const std::string& stem) {
  const char* tmp = std::getenv(kTmpDirVar);
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + stem + "-XXXXXX";
  if (!::mkdtemp(pattern.data()))
    throw RuntimeFailure("cannot create a private directory " + pattern + ": " + std::strerror(errno));
  path_ = pattern;
}

PrivateDirectory::~PrivateDirectory() {
  std::error_code ignored;  // best effort: a destructor must not throw
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace balancenet
