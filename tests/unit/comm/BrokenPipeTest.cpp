// A process that joins a Gloo group survives writing to a socket its peer closed: the write fails with EPIPE (an
// error the caller names) instead of SIGPIPE ending the process without a word (seen once in a suite: unit_monitor's
// thread ranks, whose groups were torn down one after another, died of SIGPIPE).
#include <sys/socket.h>
#include <unistd.h>

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <cerrno>

#include <gtest/gtest.h>

#include "balancenet/comm/group/GlooGroup.h"

namespace balancenet::comm {
namespace {

TEST(BrokenPipe, AfterJoiningAGroupAWriteToAClosedPeerIsEpipe) {
  auto group = joinGroup(c10::make_intrusive<c10d::HashStore>(), 0, 1, std::chrono::seconds(10));
  int ends[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, ends), 0);
  ::close(ends[1]);
  errno = 0;
  EXPECT_EQ(::write(ends[0], "x", 1), -1);  // before the fix, SIGPIPE: the test binary died here
  EXPECT_EQ(errno, EPIPE);
  ::close(ends[0]);
}

}  // namespace
}  // namespace balancenet::comm
