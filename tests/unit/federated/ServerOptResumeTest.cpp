// The server optimiser's state through the checkpoint bytes: R steps == R/2, save, load, R/2 bit for bit; the
// clients' momentum direction.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "balancenet/federated/process/LocalTraining.h"
#include "balancenet/federated/process/ServerCheckpoint.h"
#include "balancenet/federated/serveropt/ServerOptimizer.h"

namespace balancenet::federated {
namespace {

// Four server steps with the pseudo-gradient of step k drawn from seed k.
at::Tensor stepsFrom(const FederatedOptions& o, at::Tensor x, ServerOptState& state, int from, int to) {
  for (int k = from; k < to; ++k) {
    at::manual_seed(k);
    x = serverStep(o, x, x + 0.01 * at::randn({333}, at::kFloat), state);
  }
  return x;
}

TEST(ServerOptResume, StateThroughTheCheckpointContinuesBitForBit) {
  for (const std::string name : {"avgm", "adam", "yogi", "adagrad"}) {
    FederatedOptions o;
    o.serverOpt = name;
    o.serverLr = 0.03;
    at::manual_seed(99);
    const auto x0 = at::randn({333}, at::kFloat);
    ServerOptState straight;
    const auto four = stepsFrom(o, x0, straight, 0, 4);
    ServerOptState first;
    ServerState saved;
    saved.global = stepsFrom(o, x0, first, 0, 2);
    saved.optimizer = first;
    auto loaded = decodeServerState(encodeServerState(saved));
    EXPECT_EQ(loaded.optimizer.v.defined(), name != "avgm") << name;
    const auto resumed = stepsFrom(o, loaded.global, loaded.optimizer, 2, 4);
    EXPECT_TRUE(at::equal(four, resumed)) << name;
    EXPECT_FALSE(at::equal(four, x0)) << name;
  }
  ServerState none;  // avg keeps no state: the bytes are those before server optimisers existed
  none.global = at::ones({3});
  const auto d = decodeServerState(encodeServerState(none));
  EXPECT_FALSE(d.optimizer.m.defined());
  EXPECT_EQ(encodeServerState(none).find("moments"), std::string::npos);
}

TEST(ServerOptResume, IdentityNamesTheServerOptimizerButAvgStaysAsBefore) {
  FederatedOptions o;
  o.strategy = "fedavg";
  EXPECT_EQ(federatedIdentityOptimizer(o), "federated fedavg");
  o.serverOpt = "yogi";
  EXPECT_EQ(federatedIdentityOptimizer(o), "federated fedavg yogi");
}

// A resume that holds out another share of each client's data would train on other samples: refused by name.
TEST(ServerOptResume, IdentityNamesAHeldOutShareOtherThanTheUsualOne) {
  FederatedOptions o;
  o.strategy = "fedavg";
  o.clientEvalFraction = 0.2;
  EXPECT_EQ(federatedIdentityOptimizer(o), "federated fedavg --client-eval-fraction 0.2");
  o.clientEvalFraction = 0;
  EXPECT_EQ(federatedIdentityOptimizer(o), "federated fedavg --client-eval-fraction 0");
  o.strategy = "fedbuff";  // asynchronous: holds out nothing, as before the flag
  EXPECT_EQ(federatedIdentityOptimizer(o), "federated fedbuff");
}

// Momentum 0.5, constant gradient g: g, 1.5 g, 1.75 g (torch.optim.SGD's first step is the gradient itself).
TEST(ClientMomentum, HeavyBallDirectionsFromAFreshBuffer) {
  const auto g = at::tensor({2.0, -4.0}, at::kDouble);
  at::Tensor buffer;
  EXPECT_TRUE(at::allclose(momentumDirection(g, buffer, 0.5), g));
  EXPECT_TRUE(at::allclose(momentumDirection(g, buffer, 0.5), 1.5 * g));
  EXPECT_TRUE(at::allclose(momentumDirection(g, buffer, 0.5), 1.75 * g));
  EXPECT_TRUE(at::equal(g, at::tensor({2.0, -4.0}, at::kDouble))) << "the gradient itself is not changed";
}

}  // namespace
}  // namespace balancenet::federated
