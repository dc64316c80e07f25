// Atomic write = temp file + fsync + rename + directory fsync (POSIX rename is atomic within a filesystem).
#include "balancenet/core/AtomicFile.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet {
namespace {

void syncDirectoryOf(const std::filesystem::path& file) {
  auto dir = file.parent_path().empty() ? std::filesystem::path(".") : file.parent_path();
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

void writeFileAtomically(const std::string& path, const std::string& contents) {
  const std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw RuntimeFailure(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw RuntimeFailure(fmt::format("cannot write {}: {}", path, std::strerror(err)));
    }
    done += static_cast<size_t>(n);
  }
  // Both run whatever the first says (the descriptor is closed in every path), and the error is taken
  // before the clean-up can overwrite errno.
  const int syncError = ::fsync(fd) != 0 ? errno : 0;
  const int closeError = ::close(fd) != 0 ? errno : 0;
  if (syncError != 0 || closeError != 0) {
    ::unlink(tmp.c_str());
    throw RuntimeFailure(fmt::format("cannot flush {}: {}", path, std::strerror(syncError ? syncError : closeError)));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw RuntimeFailure(fmt::format("cannot replace {}: {}", path, std::strerror(err)));
  }
  syncDirectoryOf(path);
}

void ensureDirectory(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec || !std::filesystem::is_directory(path))
    throw UsageError(fmt::format("cannot create directory {}: {}", path, ec ? ec.message() : "not a directory"));
}

}  // namespace balancenet
