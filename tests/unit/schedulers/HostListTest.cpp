// Slurm's compressed lists, expanded as Slurm's own scontrol show hostnames does.
#include "balancenet/schedulers/HostList.h"

#include <gtest/gtest.h>

#include "balancenet/core/Error.h"

namespace balancenet::schedulers {
namespace {

using Hosts = std::vector<std::string>;

TEST(HostList, RangesKeepTheirZeroPaddingAndOrder) {
  EXPECT_EQ(expandHostList("node[01-04,07]", "V"), (Hosts{"node01", "node02", "node03", "node04", "node07"}));
  EXPECT_EQ(expandHostList("n[9-11]", "V"), (Hosts{"n9", "n10", "n11"}));
  EXPECT_EQ(expandHostList("n[098-100]", "V"), (Hosts{"n098", "n099", "n100"}));
}

TEST(HostList, PlainNamesAndSeveralItems) {
  EXPECT_EQ(expandHostList("gpu1", "V"), (Hosts{"gpu1"}));
  EXPECT_EQ(expandHostList("a[1-2],b,c[5]", "V"), (Hosts{"a1", "a2", "b", "c5"}));
  EXPECT_EQ(expandHostList("host-1.example.org", "V"), (Hosts{"host-1.example.org"}));
}

TEST(HostList, SeveralBracketGroupsInOneNameMultiply) {
  EXPECT_EQ(expandHostList("r[1-2]n[1-2]", "V"), (Hosts{"r1n1", "r1n2", "r2n1", "r2n2"}));
  EXPECT_EQ(expandHostList("rack[1,3]-node[01-02]x", "V"),
            (Hosts{"rack1-node01x", "rack1-node02x", "rack3-node01x", "rack3-node02x"}));
}

TEST(HostList, MalformedListsAreOneLineErrorsNamingTheVariable) {
  for (const char* bad : {"", "node[01-", "node]1[", "node[a-b]", "node[4-1]", "node[]", "a,,b", "n[1-2[3]]", "n[1--2]",
                          "n[0-99999999]"}) {
    try {
      expandHostList(bad, "SLURM_JOB_NODELIST");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("SLURM_JOB_NODELIST"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

TEST(TasksPerNode, RepeatsExpandInNodeOrder) {
  EXPECT_EQ(expandTasksPerNode("2(x3),1", "V"), (std::vector<int>{2, 2, 2, 1}));
  EXPECT_EQ(expandTasksPerNode("4", "V"), (std::vector<int>{4}));
  EXPECT_EQ(expandTasksPerNode("3,1", "V"), (std::vector<int>{3, 1}));
}

TEST(TasksPerNode, MalformedCountsAreErrors) {
  for (const char* bad : {"", "0", "2(x0)", "2(x3", "x", "2(y3)", "-1", "2,,1"})
    EXPECT_THROW(expandTasksPerNode(bad, "SLURM_STEP_TASKS_PER_NODE"), UsageError) << bad;
}

}  // namespace
}  // namespace balancenet::schedulers
