// openJobRefusal: a TCP store beyond loopback needs a token or --insecure-open-job; files and loopback never do.
#include "balancenet/comm/admission/ClosedJob.h"

#include <gtest/gtest.h>

namespace balancenet::comm {
namespace {

RendezvousOptions store(const std::string& addr) {
  RendezvousOptions o;
  o.masterAddr = addr;
  o.masterPort = 29500;
  return o;
}

TEST(ClosedJob, AStoreBeyondLoopbackWithoutATokenIsRefusedNamingEveryWayOut) {
  for (const char* addr : {"10.0.0.1", "0.0.0.0", "node01", "fe80::1", "128.0.0.1"}) {
    const auto why = openJobRefusal(store(addr));
    ASSERT_TRUE(why.has_value()) << addr;
    EXPECT_NE(why->find(std::string("the job's store at ") + addr + ":29500 is reachable from other hosts"),
              std::string::npos)
        << *why;
    for (const char* way : {"--job-token-file FILE", "BALANCENET_JOB_TOKEN", "--job-token TOKEN", "--job-token auto",
                            "--insecure-open-job"})
      EXPECT_NE(why->find(way), std::string::npos) << way << " missing from: " << *why;
    EXPECT_EQ(why->find('\n'), std::string::npos);
  }
}

TEST(ClosedJob, ATokenOrAnExplicitlyOpenJobPasses) {
  auto withToken = store("10.0.0.1");
  withToken.jobToken = "3b9e0d5c";
  EXPECT_FALSE(openJobRefusal(withToken));
  auto open = store("10.0.0.1");
  open.insecureOpen = true;
  EXPECT_FALSE(openJobRefusal(open));
}

TEST(ClosedJob, LoopbackAndFileStoresNeedNoToken) {
  for (const char* addr : {"127.0.0.1", "127.1.2.3", "localhost", "::1"})
    EXPECT_FALSE(openJobRefusal(store(addr))) << addr;
  auto file = store("10.0.0.1");
  file.storeFile = "/tmp/balancenet-store-x/store";
  EXPECT_FALSE(openJobRefusal(file));
}

}  // namespace
}  // namespace balancenet::comm
