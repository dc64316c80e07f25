// The job token's derivations and the admission checks, over an in-memory c10d store.
#include "balancenet/comm/admission/JobAdmission.h"

#include <gtest/gtest.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "balancenet/comm/admission/JobToken.h"
#include "balancenet/core/Error.h"
#include "testing/UsageErrors.h"

namespace balancenet::comm {
namespace {

using namespace std::chrono_literals;

TEST(JobToken, Sha256MatchesTheStandardTestVector) {
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(JobToken, PrefixDependsOnTheTokenOnly) {
  EXPECT_EQ(jobKeyPrefix("secret"), jobKeyPrefix("secret"));
  EXPECT_NE(jobKeyPrefix("secret"), jobKeyPrefix("secreT"));
  EXPECT_NE(jobKeyPrefix("secret"), jobKeyPrefix(""));
  EXPECT_EQ(jobKeyPrefix("secret").find("secret"), std::string::npos);
}

TEST(JobToken, CheckRecordMatchesOnlyItsToken) {
  const auto record = tokenCheckRecord("secret");
  EXPECT_TRUE(tokenMatches(record, "secret"));
  EXPECT_FALSE(tokenMatches(record, "secret "));
  EXPECT_FALSE(tokenMatches(record, ""));
  EXPECT_TRUE(tokenMatches(tokenCheckRecord(""), ""));
  // Salted: the same token never gives the same record twice, and the record does not hold the prefix.
  EXPECT_NE(tokenCheckRecord("secret"), record);
  EXPECT_EQ(record.find(jobKeyPrefix("secret").substr(4)), std::string::npos);
  EXPECT_EQ(record.find("secret"), std::string::npos);
}

// `balancenet launch` makes one up for a single-host job, whose TCP store port is open.
TEST(JobToken, RandomTokensAreLongHexAndDiffer) {
  const std::string a = randomJobToken(), b = randomJobToken();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos) << a;
  EXPECT_NE(a, b);
}

TEST(JobToken, MalformedRecordsMatchNothing) {
  for (const std::string bad : {"", "v1", "v1:", "v1:abc", "v2:00:00", "garbage"}) EXPECT_FALSE(tokenMatches(bad, ""));
}

using balancenet::testing::usageErrorOf;

class Admission : public ::testing::Test {
 protected:
  c10::intrusive_ptr<c10d::Store> root_ = c10::make_intrusive<c10d::HashStore>();
  JobPlace place(const std::string& token) { return {token, "host:1234", 2000ms}; }
};

TEST_F(Admission, TheRightTokenSeesTheJobsKeysUnderItsPrefix) {
  publishJob(root_, place("alpha"), 4);
  auto job = admit(root_, place("alpha"));
  job->set("x", std::vector<uint8_t>{1});
  EXPECT_TRUE(root_->check({jobKeyPrefix("alpha") + "/x"}));
  EXPECT_NO_THROW(checkWorldSize(*job, place("alpha"), 4, 0));
}

TEST_F(Admission, AWrongOrMissingTokenIsRefusedAtOnce) {
  publishJob(root_, place("alpha"), 4);
  EXPECT_EQ(usageErrorOf([&] { admit(root_, place("beta")); }),
            "job token does not match the job at host:1234: give every process the job's --job-token (or "
            "BALANCENET_JOB_TOKEN)");
  EXPECT_NE(usageErrorOf([&] { admit(root_, place("")); }).find("(this process has none)"), std::string::npos);
}

TEST_F(Admission, NoJobRecordIsAFailureAfterTheTimeout) {
  JobPlace quick{"alpha", "host:1234", 100ms};
  EXPECT_THROW(admit(root_, quick), RuntimeFailure);
}

TEST_F(Admission, AWorldSizeMismatchNamesBothAndAbortsTheRendezvous) {
  publishJob(root_, place(""), 2);
  auto job = admit(root_, place(""));
  EXPECT_NO_THROW(throwIfAborted(*job));
  EXPECT_NE(
      usageErrorOf([&] {
        checkWorldSize(*job, place(""), 3, 1);
      }).find("started for 3 workers (WORLD_SIZE, or --nnodes x --nproc-per-node) but the job at host:1234 has 2"),
      std::string::npos);
  EXPECT_EQ(usageErrorOf([&] { throwIfAborted(*job); }),
            "rendezvous aborted: rank 1 was started for 3 workers, but this job has 2");
}

TEST_F(Admission, ALauncherCheckingAheadDoesNotAbortTheJob) {
  publishJob(root_, place(""), 2);
  auto job = admit(root_, place(""));
  EXPECT_NE(usageErrorOf([&] { checkWorldSize(*job, place(""), 3, std::nullopt); }), "<no UsageError>");
  EXPECT_NO_THROW(throwIfAborted(*job));
}

TEST_F(Admission, EachRankJoinsOnce) {
  publishJob(root_, place(""), 2);
  auto job = admit(root_, place(""));
  EXPECT_NO_THROW(claimRank(*job, place(""), 0));
  EXPECT_NO_THROW(claimRank(*job, place(""), 1));
  EXPECT_NE(usageErrorOf([&] { claimRank(*job, place(""), 1); }).find("rank 1 has already joined the job at host:1234"),
            std::string::npos);
}

}  // namespace
}  // namespace balancenet::comm
