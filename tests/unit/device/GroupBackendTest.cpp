// NCCL where every rank has a GPU of its own, Gloo otherwise; --backend nccl where NCCL cannot run is one line.
#include <gtest/gtest.h>

#include "balancenet/core/Error.h"
#include "balancenet/device/GroupBackend.h"

namespace balancenet::device {
namespace {

std::string failureOf(const std::string& asked, const std::vector<RankDevice>& ranks, bool built) {
  try {
    chooseGroupBackend(asked, ranks, built);
  } catch (const RuntimeFailure& e) {
    return e.what();
  }
  return "(no RuntimeFailure)";
}

TEST(GroupBackend, AutoTakesNcclOnlyWhereEveryRankHasAGpuOfItsOwn) {
  const std::vector<RankDevice> gpus{{"a", "cuda:0"}, {"a", "cuda:1"}, {"b", "cuda:0"}};
  EXPECT_EQ(chooseGroupBackend("auto", gpus, true), GroupBackend::Nccl);
  EXPECT_EQ(chooseGroupBackend("gloo", gpus, true), GroupBackend::Gloo);
  EXPECT_EQ(chooseGroupBackend("auto", gpus, false), GroupBackend::Gloo);  // a build without the plugin
  EXPECT_EQ(chooseGroupBackend("auto", {{"a", "cuda:0"}, {"b", "cpu"}}, true), GroupBackend::Gloo);
  EXPECT_EQ(chooseGroupBackend("auto", {{"a", "cuda:0"}, {"a", "cuda:0"}}, true), GroupBackend::Gloo);
  EXPECT_EQ(chooseGroupBackend("auto", {{"a", "cpu"}, {"b", "cpu"}}, true), GroupBackend::Gloo);
}

TEST(GroupBackend, NcclWhereItCannotRunSaysWhy) {
  EXPECT_NE(failureOf("nccl", {{"a", "cuda:0"}, {"b", "cpu"}}, true).find("rank 1 computes on the cpu"),
            std::string::npos);
  EXPECT_NE(failureOf("nccl", {{"h", "cuda:0"}, {"h", "cuda:0"}}, true)
                .find("ranks 0 and 1 share cuda:0 on h (NCCL takes one rank per GPU)"),
            std::string::npos);
  EXPECT_NE(failureOf("nccl", {{"a", "cuda:0"}}, false).find("this build has no NCCL"), std::string::npos);
  EXPECT_EQ(chooseGroupBackend("nccl", {{"a", "cuda:0"}, {"b", "cuda:0"}}, true), GroupBackend::Nccl);
}

}  // namespace
}  // namespace balancenet::device
