#include "balancenet/federated/LabelPartition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "balancenet/federated/FederatedOptions.h"
#include "testing/TempDir.h"
#include "testing/UsageErrors.h"

namespace balancenet::federated {
namespace {

constexpr int64_t kClasses = 10;

// 1,000 samples, 100 of each label, labels interleaved (not sorted) as in a real data set.
std::vector<int64_t> tenClassLabels() {
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < 1000; ++i) labels.push_back((i * 7) % kClasses);
  return labels;
}

// The mean over clients of the share of a client's samples that carry its most frequent label.
double meanMaxLabelShare(const std::vector<std::vector<int64_t>>& counts) {
  double sum = 0;
  for (const auto& c : counts) {
    int64_t total = 0;
    for (int64_t n : c) total += n;
    sum += double(*std::max_element(c.begin(), c.end())) / double(total);
  }
  return sum / double(counts.size());
}

TEST(LabelPartitionTest, EveryIndexInExactlyOneShardAndShardsAscending) {
  const auto labels = tenClassLabels();
  for (double alpha : {0.05, 0.1, 0.5, 100.0, kIid}) {
    const auto shards = dirichletShards(labels, 8, alpha, 42, kClasses);
    ASSERT_EQ(shards.size(), 8u);
    std::vector<int> seen(labels.size());
    for (const auto& s : shards) {
      EXPECT_FALSE(s.empty()) << alpha;
      EXPECT_TRUE(std::is_sorted(s.begin(), s.end())) << alpha;
      for (int64_t i : s) ++seen.at(size_t(i));
    }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), int64_t(labels.size())) << alpha;
  }
}

TEST(LabelPartitionTest, SameSeedSameShardsOtherSeedOthers) {
  const auto labels = tenClassLabels();
  for (double alpha : {0.1, kIid}) {
    EXPECT_EQ(dirichletShards(labels, 8, alpha, 5, kClasses), dirichletShards(labels, 8, alpha, 5, kClasses));
    EXPECT_NE(dirichletShards(labels, 8, alpha, 5, kClasses), dirichletShards(labels, 8, alpha, 6, kClasses));
  }
}

TEST(LabelPartitionTest, SmallAlphaIsMuchMoreSkewedThanLargeAlpha) {
  const auto labels = tenClassLabels();
  const double skewed = meanMaxLabelShare(labelCounts(dirichletShards(labels, 8, 0.1, 1, kClasses), labels, kClasses));
  const double even = meanMaxLabelShare(labelCounts(dirichletShards(labels, 8, 100, 1, kClasses), labels, kClasses));
  // Ten equally frequent labels: an even split gives each client about 0.1 of each; alpha 0.1 gives most
  // clients one or two dominant labels.
  EXPECT_GT(skewed, 0.5);
  EXPECT_LT(even, 0.2);
}

// The exact label counts of one seed: pins the draw (gamma sampler, shuffle, cuts) so that a run's shards
// can be rebuilt from its seed later and on other machines; a change to the algorithm must change this table.
TEST(LabelPartitionTest, LabelCountsFollowTheSeedExactly) {
  const auto labels = tenClassLabels();
  const std::vector<std::vector<int64_t>> expected = {{3, 29, 62, 2, 10, 29, 19, 52, 6, 45},
                                                      {6, 49, 1, 1, 53, 50, 39, 36, 48, 7},
                                                      {9, 22, 19, 38, 1, 21, 34, 0, 5, 2},
                                                      {82, 0, 18, 59, 36, 0, 8, 12, 41, 46}};
  EXPECT_EQ(labelCounts(dirichletShards(labels, 4, 0.5, 1, kClasses), labels, kClasses), expected);
  const std::vector<int64_t> firstIid = {0, 3, 6, 14, 15, 27, 30, 31};
  const auto iid = dirichletShards(labels, 4, kIid, 1, kClasses);
  EXPECT_EQ(std::vector<int64_t>(iid[0].begin(), iid[0].begin() + 8), firstIid);
}

TEST(LabelPartitionTest, IidShardsAreEqualAsPossible) {
  const auto labels = tenClassLabels();
  const auto shards = dirichletShards(labels, 7, kIid, 3, kClasses);
  for (const auto& s : shards) EXPECT_TRUE(s.size() == 142 || s.size() == 143) << s.size();  // 1000 / 7
}

TEST(LabelPartitionTest, CountsSumToTheLabelTotals) {
  const auto labels = tenClassLabels();
  const auto counts = labelCounts(dirichletShards(labels, 8, 0.3, 9, kClasses), labels, kClasses);
  for (int64_t k = 0; k < kClasses; ++k) {
    int64_t total = 0;
    for (const auto& c : counts) total += c[size_t(k)];
    EXPECT_EQ(total, 100) << k;
  }
}

TEST(LabelPartitionTest, LabelCountsOfHandMadeShards) {
  const std::vector<int64_t> labels = {0, 1, 1, 2, 0};
  const std::vector<std::vector<int64_t>> expected = {{1, 2, 0}, {1, 0, 1}};
  EXPECT_EQ(labelCounts({{0, 1, 2}, {3, 4}}, labels, 3), expected);
}

TEST(LabelPartitionTest, EveryShardGetsASampleEvenWhenTheDrawLeavesSomeEmpty) {
  // 60 samples of 3 labels over 50 clients at alpha 0.01: the draw itself leaves most clients empty.
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < 60; ++i) labels.push_back(i % 3);
  const auto shards = dirichletShards(labels, 50, 0.01, 4, 3);
  size_t total = 0;
  for (const auto& s : shards) {
    EXPECT_FALSE(s.empty());
    total += s.size();
  }
  EXPECT_EQ(total, 60u);
  // As many clients as samples: one each.
  for (const auto& s : dirichletShards(std::vector<int64_t>(5, 0), 5, 0.1, 4, 1)) EXPECT_EQ(s.size(), 1u);
}

TEST(LabelPartitionTest, BadArgumentsAreUsageErrors) {
  const auto labels = tenClassLabels();
  using testing::usageErrorOf;
  EXPECT_NE(usageErrorOf([&] { dirichletShards(labels, 0, 0.5, 1, kClasses); }).find("--clients"), std::string::npos);
  EXPECT_NE(usageErrorOf([&] { dirichletShards(labels, 8, 0, 1, kClasses); }).find("--alpha"), std::string::npos);
  EXPECT_NE(usageErrorOf([&] { dirichletShards(labels, 8, -1, 1, kClasses); }).find("--alpha"), std::string::npos);
  EXPECT_NE(usageErrorOf([&] { dirichletShards({0, 1}, 3, 0.5, 1, 2); }).find("--clients 3"), std::string::npos);
  EXPECT_NE(usageErrorOf([&] { dirichletShards(labels, 8, std::nan(""), 1, kClasses); }).find("--alpha"),
            std::string::npos);
  EXPECT_NE(usageErrorOf([&] { dirichletShards({0, 5}, 1, 0.5, 1, 2); }).find("label is 5"), std::string::npos);
  EXPECT_NE(usageErrorOf([&] { dirichletShards({0, 0}, 1, 0.5, 1, 0); }).find("0 classes"), std::string::npos);
}

TEST(LabelPartitionTest, ParseAlpha) {
  EXPECT_EQ(parseAlpha("iid"), kIid);
  EXPECT_EQ(parseAlpha("0.1"), 0.1);
  EXPECT_EQ(parseAlpha("100"), 100);
  for (const char* bad : {"0", "-0.5", "abc", "", "0.1x", "nan", "inf", "IID"})
    EXPECT_NE(testing::usageErrorOf([&] { parseAlpha(bad); }).find("--alpha"), std::string::npos) << bad;
}

TEST(LabelPartitionTest, PartitionCsv) {
  testing::TempDir dir;
  writePartitionCsv(dir.file("partition.csv"), {{1, 2, 0}, {1, 0, 1}});
  EXPECT_EQ(testing::readFile(dir.file("partition.csv")),
            "client,samples,label_0,label_1,label_2\n0,3,1,2,0\n1,2,1,0,1\n");
}

}  // namespace
}  // namespace balancenet::federated
