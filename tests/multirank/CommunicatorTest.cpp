// Communicator collectives on thread ranks.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "balancenet/comm/FlatAllReduceSync.h"
#include "testing/ThreadRanks.h"

namespace balancenet {
namespace {

TEST(Communicator, AllReduceBroadcastAllGather) {
  testing::runRanks(3, [](comm::Communicator& comm) {
    auto t = at::full({4}, static_cast<float>(comm.rank() + 1));
    comm.allreduceSum(t);
    EXPECT_TRUE(at::equal(t, at::full({4}, 6.0f)));

    std::vector<at::Tensor> mixed{at::full({2, 2}, float(comm.rank())), at::full({3}, int64_t(comm.rank() * 10))};
    comm.broadcast(mixed, 2);
    EXPECT_TRUE(at::equal(mixed[0], at::full({2, 2}, 2.0f)));
    EXPECT_TRUE(at::equal(mixed[1], at::full({3}, int64_t{20})));

    auto parts = comm.allgather(at::full({2}, double(comm.rank())));
    ASSERT_EQ(parts.size(), 3u);
    for (int r = 0; r < 3; ++r) EXPECT_EQ(parts[r][1].item<double>(), r);
  });
}

TEST(FlatAllReduceSync, SumsGradientsAndScalarsInOneMessage) {
  testing::runRanks(2, [](comm::Communicator& comm) {
    comm::FlatAllReduceSync sync(comm);
    std::vector<at::Tensor> grads{at::full({3, 2}, float(comm.rank() + 1)), at::full({5}, 10.0f * comm.rank())};
    auto scalars = at::full({2}, 0.5f);
    auto stats = sync.synchronize(grads, scalars, {0, 3, 1.0});
    EXPECT_TRUE(at::equal(grads[0], at::full({3, 2}, 3.0f)));
    EXPECT_TRUE(at::equal(grads[1], at::full({5}, 10.0f)));
    EXPECT_TRUE(at::equal(scalars, at::full({2}, 1.0f)));
    EXPECT_EQ(stats.bytesSent, (6 + 5 + 2) * 4);  // ring: 2(P-1)/P = 1 x the payload for 2 ranks
    EXPECT_EQ(stats.bytesReceived, stats.bytesSent);
  });
}

}  // namespace
}  // namespace balancenet
