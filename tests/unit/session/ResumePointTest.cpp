// A session's resume point survives its trip through the new group's broadcast: any step, batch and state bytes
// (NUL bytes too) come back as they were; a message too short to hold the numbers is one line, not garbage.
#include "balancenet/session/ResumePoint.h"

#include <gtest/gtest.h>

#include <limits>

#include "balancenet/core/Error.h"

namespace balancenet::session {
namespace {

TEST(ResumePoint, EveryFieldComesBackAsItWas) {
  const std::string state("model\0and optimiser", 19);
  for (const ResumePoint& p : {ResumePoint{0, 0, ""}, ResumePoint{41, 8200, state},
                               ResumePoint{std::numeric_limits<int64_t>::max(), -1, "x"}}) {
    const auto back = decodeResumePoint(encodeResumePoint(p));
    EXPECT_EQ(back.step, p.step);
    EXPECT_EQ(back.batch, p.batch);
    EXPECT_EQ(back.state, p.state);
  }
  EXPECT_EQ(encodeResumePoint({1, 2, state}).size(), 16u + state.size());
}

TEST(ResumePoint, AMessageTooShortIsRefused) {
  try {
    decodeResumePoint(std::string(15, 'x'));
    FAIL() << "15 bytes were taken";
  } catch (const RuntimeFailure& e) {
    EXPECT_NE(std::string(e.what()).find("15 bytes, fewer than 16"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace balancenet::session
