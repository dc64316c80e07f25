// MappedFile: open, fstat, mmap(PROT_READ, MAP_SHARED) and close; the mapping outlives the descriptor. The
// mapped ranges are listed for a SIGBUS handler (a file truncated under its mapping: one line, exit 2).
#include "balancenet/data/MappedFile.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::data {
namespace {

// The live mappings, read by the signal handler without a lock: a slot's range and message are written before its
// `used` flag is set, and cleared after it is reset. Beyond kSlots mappings a truncation stays a plain SIGBUS.
struct MappedSlot {
  std::atomic<bool> used{false};
  const uint8_t* begin = nullptr;
  const uint8_t* end = nullptr;
  char message[512] = {};
};
constexpr size_t kSlots = 64;
std::array<MappedSlot, kSlots> slots;
std::mutex slotsMutex;               // taken by the mapping threads, never by the handler
struct sigaction previousAction {};  // what handled SIGBUS before (the default, or Python's faulthandler)

void onBusError(int, siginfo_t* info, void*) {
  const auto* at = static_cast<const uint8_t*>(info->si_addr);
  for (const auto& slot : slots)
    if (slot.used.load(std::memory_order_acquire) && at >= slot.begin && at < slot.end) {
      const ssize_t ignored = ::write(STDERR_FILENO, slot.message, std::strlen(slot.message));
      (void)ignored;
      ::_exit(2);
    }
  // Not one of ours: returning re-runs the access, which the previous handler now gets, as before.
  ::sigaction(SIGBUS, &previousAction, nullptr);
}

int watchMapping(const std::string& path, const uint8_t* data, size_t size) {
  std::lock_guard<std::mutex> lock(slotsMutex);
  static const bool installed = [] {
    struct sigaction action {};
    action.sa_sigaction = onBusError;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    return ::sigaction(SIGBUS, &action, &previousAction) == 0;
  }();
  if (!installed) return -1;
  for (size_t i = 0; i < kSlots; ++i) {
    auto& slot = slots[i];
    if (slot.used.load(std::memory_order_relaxed)) continue;
    slot.begin = data;
    slot.end = data + size;
    fmt::format_to_n(slot.message, sizeof slot.message - 1,
                     "balancenet: error: {}: the file changed size while it was read (truncated or rewritten during "
                     "the run)\n",
                     path);
    slot.used.store(true, std::memory_order_release);
    return static_cast<int>(i);
  }
  return -1;
}

void unwatchMapping(int slot) {
  if (slot < 0) return;
  std::lock_guard<std::mutex> lock(slotsMutex);
  slots[slot].used.store(false, std::memory_order_release);
  std::memset(slots[slot].message, 0, sizeof slots[slot].message);
}

}  // namespace

MappedFile::MappedFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw UsageError(fmt::format("{}: {}", path, errno == ENOENT ? "no such file" : std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw UsageError(fmt::format("{}: not a regular file", path));
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    const int err = errno;
    ::close(fd);
    if (p == MAP_FAILED) throw UsageError(fmt::format("{}: cannot map: {}", path, std::strerror(err)));
    data_ = static_cast<const uint8_t*>(p);
    watchSlot_ = watchMapping(path_, data_, size_);
  } else {
    ::close(fd);
  }
}

MappedFile::~MappedFile() {
  unwatchMapping(watchSlot_);
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace balancenet::data
