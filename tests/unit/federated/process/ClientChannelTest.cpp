// ClientChannel's admission on the server's side: the generation a client announced is the one opened, and a
// stale generation (its client died and was restarted) is never waited on. Ranks are threads over a HashStore.
#include "balancenet/federated/process/ClientChannel.h"

#include <gtest/gtest.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <future>
#include <thread>

#include <fmt/format.h>

#include "balancenet/core/DetachedTask.h"

namespace balancenet::federated {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Bounds every wait of these tests: the defect was a server joining a dead peer's channel for an hour.
constexpr auto kBound = 20s;

ChannelOptions options() {
  ChannelOptions o;
  o.timeout = 30s;  // a join or receive left behind by a failing test gives up soon after it
  return o;
}

// A client that announced `generation` and died before its channel formed: it got as far as the channel
// (its joining mark is there) but no Gloo peer will ever answer on it.
void announceDeadClient(c10d::Store& store, int client, int64_t generation) {
  ASSERT_EQ(store.add(fmt::format("fed/{}/generation", client), 1), generation);
  store.set(fmt::format("fed/{}/{}/joining", client, generation), std::vector<uint8_t>{1});
}

// The server's acceptNewest on a thread of its own, so a test that fails is bounded instead of hanging.
std::future<std::unique_ptr<ClientChannel>> acceptLater(const c10::intrusive_ptr<c10d::Store>& store, int client) {
  return runDetached(
      [store, client] { return ClientChannel::acceptNewest(store, client, 0, Clock::now() + kBound, options()); });
}

// A live client (the launcher's restart): announces the next generation, then waits for one message.
std::future<MessageHeader> liveClient(const c10::intrusive_ptr<c10d::Store>& store, int client) {
  return runDetached(
      [store, client] { return ClientChannel::connectClient(store, client, options())->receive(0).header; });
}

// The server reaches the client after its restart: generation 2 is announced, generation 1 is dead.
void expectTheServerReachesGenerationTwo(std::future<std::unique_ptr<ClientChannel>>& accepted,
                                         std::future<MessageHeader>& received) {
  ASSERT_EQ(accepted.wait_for(kBound), std::future_status::ready) << "the server waits on the dead generation 1";
  auto channel = accepted.get();
  ASSERT_TRUE(channel);
  EXPECT_EQ(channel->generation(), 2);
  MessageHeader stop;
  stop.kind = MessageKind::Stop;
  stop.round = 7;
  channel->send(stop, {});
  ASSERT_EQ(received.wait_for(kBound), std::future_status::ready);
  EXPECT_EQ(received.get().round, 7);
}

TEST(ClientChannel, AClientRestartedBeforeTheServerArrivesIsReachedAtItsNewGeneration) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  announceDeadClient(*store, 1, 1);
  auto received = liveClient(store, 1);
  while (ClientChannel::announcedGeneration(*store, 1) < 2) std::this_thread::sleep_for(1ms);
  auto accepted = acceptLater(store, 1);
  expectTheServerReachesGenerationTwo(accepted, received);
}

TEST(ClientChannel, AGenerationOvertakenWhileTheServerJoinsItIsGivenUp) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  announceDeadClient(*store, 0, 1);
  auto accepted = acceptLater(store, 0);  // starts joining generation 1, whose client is gone
  std::this_thread::sleep_for(300ms);
  auto received = liveClient(store, 0);  // the restarted client
  expectTheServerReachesGenerationTwo(accepted, received);
}

TEST(ClientChannel, NoClientIsNullAtTheDeadline) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  const auto start = Clock::now();
  EXPECT_FALSE(ClientChannel::acceptNewest(store, 0, 0, start + 200ms, options()));
  EXPECT_LT(Clock::now() - start, 5s);
  announceDeadClient(*store, 0, 1);  // announced, but older than what the server already had
  EXPECT_FALSE(ClientChannel::acceptNewest(store, 0, 1, Clock::now() + 200ms, options()));
}

}  // namespace
}  // namespace balancenet::federated
