// The launcher's children for real: output forwarded line by line with the child's name, the exit read back,
// and torch's "[rankN]: " prefix dropped from the line that names a failure.
#include "balancenet/launch/ChildProcess.h"

#include <gtest/gtest.h>

#include <csignal>

namespace balancenet::launch {
namespace {

TEST(ChildProcess, TorchsRankPrefixIsDroppedOnlyWhereItIsOne) {
  EXPECT_EQ(withoutTorchRankPrefix("[rank3]: ValueError: bad"), "ValueError: bad");
  EXPECT_EQ(withoutTorchRankPrefix("[rank12]: x"), "x");
  EXPECT_EQ(withoutTorchRankPrefix("[rank]: x"), "[rank]: x");
  EXPECT_EQ(withoutTorchRankPrefix("[rankA]: x"), "[rankA]: x");
  EXPECT_EQ(withoutTorchRankPrefix("[rank 3] step 5"), "[rank 3] step 5");
  EXPECT_EQ(withoutTorchRankPrefix("plain line"), "plain line");
}

std::vector<Child> runToTheEnd(const std::string& script) {
  std::vector<Child> children;
  children.push_back(spawn("/bin/sh", {"sh", "-c", script}, "t", "test child", {"PATH=/usr/bin:/bin"}));
  for (int pass = 0; anyRunning(children) && pass < 200; ++pass) {  // 20 s at most
    pumpOutput(children, 100);
    reap(children);
  }
  return children;
}

TEST(ChildProcess, AChildsLastErrorAndLastLineAreKeptAndItsExitRead) {
  const auto children = runToTheEnd("echo first; echo 'balancenet: error: the cause'; echo '[rank1]: last'; exit 3");
  ASSERT_FALSE(anyRunning(children));
  EXPECT_EQ(children[0].lastError, "the cause");
  EXPECT_EQ(children[0].lastLine, "last");
  EXPECT_TRUE(failed(children[0].status));
  EXPECT_EQ(describeExit(children[0].status), "exited with code 3");
}

TEST(ChildProcess, StopAllEndsAChildThatWouldRunForEver) {
  std::vector<Child> children;
  children.push_back(spawn("/bin/sh", {"sh", "-c", "exec sleep 600"}, "t", "test child", {"PATH=/usr/bin:/bin"}));
  EXPECT_EQ(runningWorkers(children), 1);
  stopAll(children);
  EXPECT_FALSE(anyRunning(children));
  EXPECT_EQ(runningWorkers(children), 0);
  EXPECT_EQ(describeExit(children[0].status), "was killed by signal 15 (Terminated)");
}

}  // namespace
}  // namespace balancenet::launch
