// Split parsing and validation: the user's --split either is a valid allocation or a one-line error.
#include <gtest/gtest.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/Split.h"

namespace balancenet {
namespace {

TEST(Split, ParsesOffsetsAndShares) {
  auto s = Split::parse("100,100,40,16", 4, 256);
  EXPECT_EQ(s.batches, (std::vector<int64_t>{100, 100, 40, 16}));
  EXPECT_EQ(s.total(), 256);
  EXPECT_EQ(s.offsetOf(0), 0);
  EXPECT_EQ(s.offsetOf(3), 240);
  EXPECT_DOUBLE_EQ(s.share(3), 16.0 / 256);
  EXPECT_EQ(s.str(), "100,100,40,16");
}

TEST(Split, EqualSpreadsTheRemainderOverTheFirstRanks) {
  EXPECT_EQ(Split::equal(10, 4).batches, (std::vector<int64_t>{3, 3, 2, 2}));
  EXPECT_EQ(Split::equal(8, 1).batches, (std::vector<int64_t>{8}));
}

void expectUsageError(const std::string& text, int world, int64_t batch, const std::string& fragment) {
  try {
    Split::parse(text, world, batch);
    FAIL() << "accepted --split " << text;
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "multi-line error";
  }
}

TEST(Split, RejectsBadSplits) {
  expectUsageError("100,100,40", 4, 240, "3 entries but the job has 4 workers");
  expectUsageError("100,100,40,10", 4, 256, "sums to 250 but --global-batch is 256");
  expectUsageError("200,60,0,-4", 4, 256, "worker 2 gets 0 samples");
  expectUsageError("1,x,3", 3, 5, "'x' is not an integer");
  expectUsageError("1,2.5,3", 3, 6, "'2.5' is not an integer");
  expectUsageError("", 1, 5, "0 entries");
}

// A split the program computed (a policy's decision, an elastic re-form) that breaks the invariant is a
// bug: it must not be reported as bad input ("--split ...", exit 2) for a flag the user never gave.
TEST(Split, BrokenInvariantIsAnInternalErrorNotBadInput) {
  const Split broken{{8, -1}};
  try {
    broken.validate(2, 8);
    FAIL() << "accepted a split with an empty worker";
  } catch (const UsageError& e) {
    FAIL() << "reported as bad input: " << e.what();
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("a bug"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("--split"), std::string::npos) << "names a flag nobody gave: " << e.what();
  }
  EXPECT_THROW(Split({{4, 4}}).validate(3, 8), InternalError);
  EXPECT_THROW(Split({{4, 4}}).validate(2, 9), InternalError);
  EXPECT_NO_THROW(Split({{4, 4}}).validate(2, 8));
  EXPECT_THROW(Split({{0, 0}}).validate(2, 0), InternalError);  // nobody has a sample
}

// A worker the balanced policy leaves out of the exchange has a share of 0 inside the program; the user's --split
// still gives every worker at least one.
TEST(Split, AWorkerLeftOutHasZeroInsideTheProgramButNotInTheFlag) {
  EXPECT_NO_THROW(Split({{43, 43, 42, 0}}).validate(4, 128));
  expectUsageError("43,43,42,0", 4, 128, "at least 1");
}

}  // namespace
}  // namespace balancenet
