// Distribution and StepLaw: parsing, seeded reproducibility, the laws' centres.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "balancenet/core/Error.h"
#include "balancenet/core/PortableRandom.h"
#include "balancenet/simulate/Distribution.h"
#include "balancenet/simulate/StepLaw.h"

namespace balancenet::simulate {
namespace {

TEST(Distribution, ParsesEveryLaw) {
  EXPECT_EQ(Distribution::parse("const:2", "--x").kind, Distribution::Kind::Constant);
  const auto u = Distribution::parse("uniform:1,3", "--x");
  EXPECT_EQ(u.kind, Distribution::Kind::Uniform);
  EXPECT_DOUBLE_EQ(u.mean(), 2);
  EXPECT_DOUBLE_EQ(Distribution::parse("normal:5,1", "--x").mean(), 5);
  const auto l = Distribution::parse("lognormal:1,0.5", "--x");
  EXPECT_EQ(l.kind, Distribution::Kind::LogNormal);
  EXPECT_NEAR(l.mean(), std::exp(0.125), 1e-12);
}

TEST(Distribution, RejectsBadTextWithTheFlagName) {
  for (const char* bad :
       {"gamma:1,2", "lognormal:1", "lognormal:0,1", "uniform:3,1", "normal:1,x", "const:", "const"}) {
    try {
      Distribution::parse(bad, "--speeds");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--speeds"), std::string::npos) << e.what();
    }
  }
}

TEST(Distribution, DrawsAreReproducibleAndCentred) {
  const auto law = Distribution::parse("lognormal:2,0.5", "--x");
  auto g1 = seededGenerator(7, 1), g2 = seededGenerator(7, 1);
  std::vector<double> draws;
  for (int i = 0; i < 20001; ++i) {
    draws.push_back(law.draw(g1));
    ASSERT_EQ(draws.back(), law.draw(g2));
  }
  std::nth_element(draws.begin(), draws.begin() + 10000, draws.end());
  EXPECT_NEAR(draws[10000], 2.0, 0.05);  // the median parameter is the median
}

TEST(StepLaw, TimeIsFixedPlusPerSampleOverSpeed) {
  StepLawOptions o;
  o.fixedMs = 4;
  o.perSampleMs = 0.5;
  o.noise = Distribution::parse("const:1", "--noise");
  ClusterLaw law({1.0, 2.0}, o, 1);
  law.advance(0);
  EXPECT_DOUBLE_EQ(law.stepMs(0, 10), 9.0);
  EXPECT_DOUBLE_EQ(law.stepMs(1, 10), 4.5);
  EXPECT_DOUBLE_EQ(law.expectedFixedMs(1), 2.0);
  EXPECT_DOUBLE_EQ(law.expectedPerSampleMs(1), 0.25);
}

TEST(StepLaw, ChangesApplyAtTheirStepAndStragglersMultiply) {
  StepLawOptions o;
  o.noise = Distribution::parse("const:1", "--noise");
  o.changes = StepLawOptions::parseChanges("3:1:0.25");
  ClusterLaw law({1.0, 1.0}, o, 1);
  for (int64_t s = 0; s < 3; ++s) law.advance(s);
  EXPECT_DOUBLE_EQ(law.speeds()[1], 1.0);
  law.advance(3);
  EXPECT_DOUBLE_EQ(law.speeds()[1], 0.25);
  EXPECT_DOUBLE_EQ(law.speeds()[0], 1.0);

  o.changes.clear();
  o.stragglerProbability = 1;
  o.stragglerFactor = 3;
  ClusterLaw slow({1.0}, o, 1);
  EXPECT_DOUBLE_EQ(slow.stepMs(0, 10), 3 * (o.fixedMs + 10 * o.perSampleMs));
}

TEST(StepLaw, BadChangesAreUsageErrors) {
  for (const char* bad : {"3:1", "3:1:0", "x:1:2", "3:1:2:4", "-1:0:2"})
    EXPECT_THROW(StepLawOptions::parseChanges(bad), UsageError) << bad;
  StepLawOptions o;
  o.changes = StepLawOptions::parseChanges("3:5:2");
  EXPECT_THROW(ClusterLaw({1.0, 1.0}, o, 1), UsageError);  // node 5 of 2
}

}  // namespace
}  // namespace balancenet::simulate
