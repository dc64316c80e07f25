// The message header survives the trip through the float buffer bit for bit.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "balancenet/ps/PsMessage.h"

namespace balancenet::ps {
namespace {

TEST(PsMessage, HeaderAndPayloadRoundTrip) {
  PsMessage m(5);
  PsHeader h;
  h.step = 123456789012LL;
  h.lr = 0.1;  // not representable in float32: must come back as the same double
  h.slowestClock = 41;
  h.scalarCount = 2;
  h.scalars[0] = 1.5f;
  h.scalars[1] = -2.25f;
  m.setHeader(h);
  m.payload().copy_(at::arange(5, at::kFloat));
  PsMessage copy(5);
  copy.buffer().copy_(m.buffer());
  const PsHeader back = copy.header();
  EXPECT_EQ(back.step, h.step);
  EXPECT_EQ(back.lr, 0.1);
  EXPECT_EQ(back.slowestClock, 41);
  EXPECT_EQ(back.scalarCount, 2);
  EXPECT_EQ(back.scalars[1], -2.25f);
  EXPECT_TRUE(at::equal(copy.payload(), at::arange(5, at::kFloat)));
  EXPECT_EQ(m.bytes(), static_cast<int64_t>(sizeof(PsHeader)) + 5 * 4);
}

}  // namespace
}  // namespace balancenet::ps
