// Partition: the uniform default and --partition's syntax, every way it can be wrong, and str() <-> parse().
#include <gtest/gtest.h>

#include "balancenet/core/Error.h"
#include "balancenet/pipeline/Partition.h"
#include "testing/UsageErrors.h"

namespace balancenet::pipeline {
namespace {

using testing::usageErrorOf;

// [first, end) per stage, for comparing partitions in one expectation.
std::vector<std::pair<size_t, size_t>> bounds(const Partition& p) {
  std::vector<std::pair<size_t, size_t>> out;
  for (const auto& r : p.stages) out.emplace_back(r.first, r.end);
  return out;
}

std::string partitionError(const std::string& text, size_t blocks, int stages) {
  return usageErrorOf([&] { Partition::parse(text, blocks, stages); });
}

TEST(Partition, UniformGivesTheFirstStagesOneMoreBlock) {
  const auto p = Partition::uniform(18, 4);
  EXPECT_EQ(p.stageCount(), 4);
  EXPECT_EQ(p.str(), "0-4,5-9,10-13,14-17");
  EXPECT_EQ(p.stages[2].size(), 4u);
  EXPECT_EQ(Partition::uniform(4, 4).str(), "0,1,2,3");
  EXPECT_EQ(Partition::uniform(7, 1).str(), "0-6");
}

TEST(Partition, UniformRefusesMoreStagesThanBlocksNamingTheBlockCount) {
  EXPECT_EQ(usageErrorOf([] { Partition::uniform(3, 4); }),
            "--pipeline-stages 4 needs at least 4 blocks but the model has 3 (balancenet models --blocks MODEL lists "
            "them)");
  EXPECT_EQ(usageErrorOf([] { Partition::uniform(3, 0); }), "--pipeline-stages must be at least 1; got 0");
}

TEST(Partition, ParsesInclusiveRangesAndSingleBlocks) {
  using Bounds = std::vector<std::pair<size_t, size_t>>;
  EXPECT_EQ(bounds(Partition::parse("0-9,10-17", 18, 2)), (Bounds{{0, 10}, {10, 18}}));
  EXPECT_EQ(bounds(Partition::parse("0-3,4,5-9", 10, 3)), (Bounds{{0, 4}, {4, 5}, {5, 10}}));
  EXPECT_EQ(bounds(Partition::parse(" 0-3, 4-4 ", 5, 2)), (Bounds{{0, 4}, {4, 5}}));
  EXPECT_EQ(bounds(Partition::parse("0", 1, 1)), (Bounds{{0, 1}}));
}

TEST(Partition, StrRoundTripsThroughParse) {
  for (size_t blocks = 1; blocks <= 20; ++blocks)
    for (int stages = 1; stages <= static_cast<int>(blocks); ++stages) {
      const auto p = Partition::uniform(blocks, stages);
      EXPECT_EQ(bounds(Partition::parse(p.str(), blocks, stages)), bounds(p)) << p.str();
    }
  // A hand-cut, uneven one too.
  const auto uneven = Partition::parse("0,1-15,16,17", 18, 4);
  EXPECT_EQ(uneven.str(), "0,1-15,16,17");
}

// Each refusal of an 18-block model's --partition, the first problem named: gaps, overlaps, ranges past the
// model, reversed ranges, the wrong number of stages, empty stages.
struct Refusal {
  const char* text;
  int stages;
  const char* message;
};
const Refusal kRefusals[] = {
    {"0-8,10-17", 2, "--partition: stage 1 starts at block 10, expected 9 (block 9 belongs to no stage)"},
    {"0-7,10-17", 2, "--partition: stage 1 starts at block 10, expected 8 (blocks 8-9 belong to no stage)"},
    {"1-9,10-17", 2, "--partition: stage 0 starts at block 1, expected 0 (block 0 belongs to no stage)"},
    {"0-9,9-17", 2, "--partition: stage 1 starts at block 9, expected 10 (it overlaps the stage before)"},
    {"0-9,10-15", 2, "--partition: blocks 16-17 belong to no stage (the model has 18 blocks)"},
    {"0-9,10-16", 2, "--partition: block 17 belongs to no stage (the model has 18 blocks)"},
    {"0-9,10-18", 2, "--partition: stage 1's range 10-18 goes past the last block 17 (the model has 18 blocks)"},
    {"0-9,99999999999999999999", 2,
     "--partition: stage 1's range 99999999999999999999 goes past the last block 17 (the model has 18 blocks)"},
    {"0-9,17-10", 2, "--partition: stage 1's range 17-10 is reversed"},
    {"0-17", 2, "--partition names 1 stage but --pipeline-stages is 2"},
    {"0-5,6-11,12-17", 2, "--partition names 3 stages but --pipeline-stages is 2"},
    {"", 2, "--partition is empty; expected one block range per stage, e.g. 0-9,10-17"},
    {"0-9,,10-17", 3, "--partition: the range of stage 1 is empty"},
    {"0-9,10-17,", 3, "--partition: the range of stage 2 is empty"},
    {"0-9, ", 2, "--partition: the range of stage 1 is empty"},
};

TEST(Partition, RefusesEachProblemInOneLineAboutThePartitionFlag) {
  for (const auto& refusal : kRefusals) {
    const auto message = partitionError(refusal.text, 18, refusal.stages);
    EXPECT_EQ(message, refusal.message) << "--partition '" << refusal.text << "'";
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(Partition, RefusesJunkQuotingIt) {
  for (const char* junk : {"ten-17", "10-", "-17", "10-12-17", "10..17", "+10-17", "1e1-17", "10 - 17"})
    EXPECT_EQ(partitionError(std::string("0-9,") + junk, 18, 2),
              std::string("--partition: '") + junk + "' (stage 1) is not a block range such as 0-9 or 4");
}

}  // namespace
}  // namespace balancenet::pipeline
