// The server's rounds over a fake server: a synchronous round aggregates the accepted updates in client order
// whatever order they arrived in, and records every client (answered, skipped, dead, rejected); fedbuff's rounds
// aggregate every `buffer` accepted updates with each one's staleness.
#include "balancenet/federated/process/RoundDriver.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <deque>
#include <map>

namespace balancenet::federated {
namespace {

// A server of `clients` clients whose answers arrive as scripted: each collect() hands over the next batch.
class FakeServer : public RoundServer {
 public:
  explicit FakeServer(int clients) : alive_(clients, true) {}

  // The test's script and what the drivers did.
  std::deque<std::vector<int>> arrivals;     // per collect(): the clients whose answers come back, in that order
  std::vector<int> dead;                     // clients whose task ends in death
  std::vector<int> refused;                  // clients whose update the server does not accept (late)
  std::vector<std::vector<int>> aggregated;  // per aggregation: its updates' clients, in order
  std::vector<RoundRecord> records;
  int64_t roundsAsked = 1;

  int64_t round() const override { return round_; }
  int64_t version() const override { return version_; }
  bool goesOn(int64_t done) const override { return done < roundsAsked; }
  int clients() const override { return static_cast<int>(alive_.size()); }
  bool alive(int client) const override { return alive_[client]; }
  bool anyAlive() const override { return true; }
  void admitRejoined() override {}
  void awaitSomeClient() override { ADD_FAILURE() << "no client should be awaited"; }
  std::vector<ClientTask> sendTasks(int64_t, RoundRecord& record) override {
    std::vector<ClientTask> tasks;
    for (int c = 0; c < clients(); ++c)
      if (alive_[c] && !out_.count(c)) {
        tasks.push_back(ClientTask{c, 3, 0, 0, 0});
        out_[c] = version_;
        record.downloadBytes += 100;
      }
    return tasks;
  }
  size_t tasksOut() const override { return out_.size(); }
  void collect(std::vector<Returned>& returned, std::vector<ClientRoundRecord>& lost) override {
    if (arrivals.empty()) return;
    for (int c : arrivals.front()) {
      const int64_t base = out_.at(c);
      out_.erase(c);
      if (std::find(dead.begin(), dead.end(), c) != dead.end()) {
        alive_[c] = false;
        lost.push_back(ClientRoundRecord{c, 3, 0, 0, 0, 1.0, 0, 0, "dead"});
        continue;
      }
      Returned r;
      r.update.client = c;
      r.update.delta = at::full({4}, static_cast<float>(c + 1));
      r.update.assignedSteps = r.update.doneSteps = 3;
      r.update.baseVersion = base;
      r.record = ClientRoundRecord{c, 3, 3, 30, 100, 1.0, 0.5, 0, "ok"};
      returned.push_back(r);
    }
    arrivals.pop_front();
  }
  bool accepted(Returned& r, int64_t, const std::optional<std::string>& rejection) override {
    const bool late = std::find(refused.begin(), refused.end(), r.update.client) != refused.end();
    if (rejection || late) r.record.status = rejection ? "rejected" : "late";
    return !rejection && !late;
  }
  void aggregate(const std::vector<ClientUpdate>& updates) override {
    std::vector<int> clients;
    for (const auto& u : updates) clients.push_back(u.client);
    aggregated.push_back(clients);
    ++version_;
  }
  int64_t modelSize() const override { return 4; }
  void endRound(RoundRecord record, int64_t roundsDone) override {
    records.push_back(std::move(record));
    round_ = roundsDone;
  }

 private:
  std::vector<bool> alive_;
  std::map<int, int64_t> out_;  // client -> the version its task started from
  int64_t round_ = 0, version_ = 0;
};

std::vector<std::string> statuses(const RoundRecord& record) {
  std::vector<std::string> s;
  for (const auto& c : record.clients) s.push_back(c.status);
  return s;
}

TEST(RoundDriver, ASynchronousRoundAggregatesInClientOrderWhateverTheArrivalOrder) {
  FakeServer server(4);
  server.arrivals = {{3}, {}, {1, 0}, {2}};  // client 2 dies
  server.dead = {2};
  synchronousRounds(0)->run(server);
  ASSERT_EQ(server.aggregated.size(), 1u);
  EXPECT_EQ(server.aggregated[0], (std::vector<int>{0, 1, 3}));
  ASSERT_EQ(server.records.size(), 1u);
  EXPECT_EQ(server.records[0].round, 0);
  EXPECT_EQ(statuses(server.records[0]), (std::vector<std::string>{"ok", "ok", "dead", "ok"}));
  EXPECT_EQ(server.records[0].downloadBytes, 400);
  EXPECT_EQ(server.round(), 1);
}

TEST(RoundDriver, ASynchronousRoundRecordsTheUpdatesItRefusesAndKeepsTheModelWhenNoneCounts) {
  FakeServer server(2);
  server.roundsAsked = 2;
  server.arrivals = {{0, 1}, {1, 0}};
  server.refused = {0, 1};
  synchronousRounds(0)->run(server);
  EXPECT_TRUE(server.aggregated.empty());
  ASSERT_EQ(server.records.size(), 2u);
  EXPECT_EQ(statuses(server.records[1]), (std::vector<std::string>{"late", "late"}));
}

TEST(RoundDriver, ASynchronousRoundRejectsAnUpdateFarBeyondTheOthers) {
  FakeServer server(4);
  server.arrivals = {{0, 1, 2, 3}};
  // Client c's delta is 4 values of c + 1, its norm 2 (c + 1): with --max-update-norm 5, clients 2 and 3 are out.
  synchronousRounds(5)->run(server);
  ASSERT_EQ(server.aggregated.size(), 1u);
  EXPECT_EQ(server.aggregated[0], (std::vector<int>{0, 1}));  // norms 2 and 4 pass; 6 and 8 do not
  EXPECT_EQ(statuses(server.records[0]), (std::vector<std::string>{"ok", "ok", "rejected", "rejected"}));
}

TEST(RoundDriver, BufferedRoundsAggregateEveryBufferOfAcceptedUpdatesWithTheirStaleness) {
  FakeServer server(3);
  server.roundsAsked = 2;
  // Clients 0 and 1 make the first aggregation (their tasks from version 0); then client 1, sent a new task from
  // version 1, and client 2, still on its task from version 0, make the second.
  server.arrivals = {{0}, {1}, {1}, {2}};
  bufferedRounds(2, 0)->run(server);
  ASSERT_EQ(server.aggregated.size(), 2u);
  EXPECT_EQ(server.aggregated[0], (std::vector<int>{0, 1}));
  EXPECT_EQ(server.aggregated[1], (std::vector<int>{1, 2}));
  ASSERT_EQ(server.records.size(), 2u);
  EXPECT_EQ(server.records[0].round, 0);
  EXPECT_EQ(server.records[1].round, 1);
  ASSERT_EQ(server.records[1].clients.size(), 2u);
  EXPECT_EQ(server.records[1].clients[0].staleness, 0);  // client 1: from version 1, aggregated at version 1
  EXPECT_EQ(server.records[1].clients[1].staleness, 1);  // client 2: from version 0
  EXPECT_EQ(server.round(), 2);
}

}  // namespace
}  // namespace balancenet::federated
