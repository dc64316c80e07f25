// Interposed fsync and fork for tests: fail on request, else libc's (found with dlsym(RTLD_NEXT)).
#include "testing/SyscallFaults.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>

namespace balancenet::testing {
namespace {

struct Fault {
  std::atomic<int> remaining{0};
  std::atomic<int> error{0};
};

Fault gFaults[2];  // by Syscall; process-wide, as the calls it stands in for are

// True (errno set) when this call of `call` is to fail.
bool failsNow(Syscall call) {
  Fault& f = gFaults[static_cast<int>(call)];
  int left = f.remaining.load();
  while (left > 0)
    if (f.remaining.compare_exchange_weak(left, left - 1)) {
      errno = f.error.load();
      return true;
    }
  return false;
}

template <typename F>
F libc(const char* name) {
  return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

void failNext(Syscall call, int error, int count) {
  Fault& f = gFaults[static_cast<int>(call)];
  f.error = error;
  f.remaining = count;
}

int openDescriptors() {
  int n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n - 1;
}

}  // namespace balancenet::testing

extern "C" int fsync(int fd) {
  using balancenet::testing::Syscall;
  if (balancenet::testing::failsNow(Syscall::Fsync)) return -1;
  static const auto real = balancenet::testing::libc<int (*)(int)>("fsync");
  return real(fd);
}

extern "C" pid_t fork() noexcept {  // glibc declares it nothrow
  using balancenet::testing::Syscall;
  if (balancenet::testing::failsNow(Syscall::Fork)) return -1;
  static const auto real = balancenet::testing::libc<pid_t (*)()>("fork");
  return real();
}
