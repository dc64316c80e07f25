// Reading --job-token-file: the mode is checked before the content is read, as ssh does for a private key.
#include "balancenet/comm/admission/JobTokenFile.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::comm {
namespace {

std::string trimmed(const std::string& s) {
  const char* space = " \t\r\n\f\v";
  const auto first = s.find_first_not_of(space);
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(space) - first + 1);
}

}  // namespace

std::string readJobTokenFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw UsageError(fmt::format("--job-token-file {}: {}", path, std::strerror(errno)));
  require(S_ISREG(st.st_mode), fmt::format("--job-token-file {}: not a regular file", path));
  // A token others can read is no secret; refused rather than warned about, as ssh refuses such a key.
  require((st.st_mode & 077) == 0,
          fmt::format("--job-token-file {}: permissions {:04o} are too open (the group or others may use it); a "
                      "token file must be private to its owner: chmod 600 {}",
                      path, st.st_mode & 0777, path));
  std::ifstream in(path);
  require(in.good(), fmt::format("--job-token-file {}: cannot be read", path));
  std::string line;
  std::getline(in, line);
  require(!in.bad(), fmt::format("--job-token-file {}: cannot be read", path));
  const std::string token = trimmed(line);
  require(!token.empty(), fmt::format("--job-token-file {}: its first line is empty (write the token there)", path));
  return token;
}

}  // namespace balancenet::comm
