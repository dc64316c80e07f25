// Bad input outside `balancenet train` (whose cases are the table in HostileInputTest.cpp), and --help.
#include <gtest/gtest.h>

#include "BinaryFixture.h"

namespace balancenet::testing {
namespace {

class BadInput : public BinaryFixture {};

TEST_F(BadInput, CompareVariantWithoutName) {
  ProcessOptions o;
  o.timeoutSeconds = 60;
  expectOneLineError(run({"compare", "--models", "mlp", "--variant", "--no-overlap", "--out", dir_.file("c")}, o),
                     "is not NAME=FLAGS", 2);
}

// Flags after compare's "--" reach compare's runs (here: refused as compare's own), not CLI11's "not expected".
TEST_F(BadInput, CompareFederatePassesFlagsAfterTheMarkAndOwnsStrategy) {
  ProcessOptions o;
  o.timeoutSeconds = 60;
  expectOneLineError(
      run({"compare", "--federate", "--out", dir_.file("c"), "--", "--clients", "2", "--strategy", "x"}, o),
      "compare --federate sets --strategy for each run", 2);
  expectOneLineError(run({"compare", "--strategies", "fedavg", "--out", dir_.file("c")}, o),
                     "--strategies needs --federate", 2);
}

TEST_F(BadInput, HelpExplainsAndSucceeds) {
  auto r = run({"train", "--help"});
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_NE(r.output.find("--split"), std::string::npos);
  EXPECT_NE(r.output.find("--master-addr"), std::string::npos);
  EXPECT_NE(r.output.find("--job-token"), std::string::npos);
}

}  // namespace
}  // namespace balancenet::testing
