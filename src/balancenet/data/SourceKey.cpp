// SourceKey: the path, size and nanosecond modification time of each file, joined.
#include "balancenet/data/SourceKey.h"

#include <sys/stat.h>

#include <filesystem>

#include <fmt/format.h>

namespace balancenet::data {

std::string sourceKey(const std::string& source, const std::vector<std::string>& paths) {
  std::string key = source;
  for (const std::string& p : paths) {
    std::error_code ec;
    const std::string absolute = std::filesystem::absolute(p, ec).lexically_normal().string();
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0)
      key += fmt::format("|{}:{}:{}.{:09}", absolute, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    else
      key += fmt::format("|{}:?", absolute);
  }
  return key;
}

}  // namespace balancenet::data
