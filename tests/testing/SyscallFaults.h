// SyscallFaults: the next calls of fsync or fork in this test process fail with a chosen errno, to reach the
// failure paths of code that calls them. Compile SyscallFaults.cpp into the test executable itself (not into a
// library): its definitions of fsync and fork interpose libc's, and hand every call not told to fail to libc.
#pragma once

namespace balancenet::testing {

enum class Syscall { Fsync, Fork };

// The next `count` calls of `call` (on any thread) return -1 with errno = `error`.
void failNext(Syscall call, int error, int count = 1);

// This process's open file descriptors (entries of /proc/self/fd, less the one listing them).
int openDescriptors();

}  // namespace balancenet::testing
