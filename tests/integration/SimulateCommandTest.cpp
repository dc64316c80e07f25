// `balancenet simulate`: a small sweep end to end (table, CSV), and a bad flag as a one-line error.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "BinaryFixture.h"

namespace balancenet::testing {
namespace {

class SimulateCommand : public BinaryFixture {};

TEST_F(SimulateCommand, SweepsNodeCountsAndPoliciesIntoATableAndACsv) {
  const std::string out = dir_.path() + "/sim";
  auto r = run({"simulate", "--nodes", "32", "--global-batch", "512", "--steps", "20", "--speeds", "lognormal:1,0.5",
                "--policies", "equal,balanced", "--out", out});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  for (const char* row : {"equal     8", "balanced     8", "equal    16", "balanced    32"})
    EXPECT_NE(r.output.find(row), std::string::npos) << row << "\n" << r.output;
  std::ifstream csv(out + "/simulation.csv");
  std::stringstream text;
  text << csv.rdbuf();
  int lines = 0;
  for (char ch : text.str()) lines += ch == '\n';
  EXPECT_EQ(lines, 1 + 3 * 2) << text.str();  // header, N = 8, 16, 32 x two policies
  EXPECT_EQ(text.str().rfind("policy,nodes,samples_per_s,", 0), 0u) << text.str();
  // Bad flags end as one line (the parsers' other cases are unit-tested: one process start here is enough).
  expectOneLineError(run({"simulate", "--speeds", "gamma:1"}), "--speeds 'gamma:1'", 2);
}

}  // namespace
}  // namespace balancenet::testing
