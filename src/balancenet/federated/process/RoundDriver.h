// RoundDriver: how the federated server's rounds go, behind one interface: synchronous rounds (every strategy but
// fedbuff: configure, send, wait for every answer or death, aggregate) or buffered asynchronous ones (fedbuff: every
// idle client always has a task; each bufferSize() accepted updates make one aggregation, a "round" in the records,
// with each update's staleness). A driver owns only its loop's state; the server (RoundServer) keeps the model, the
// clients and the records.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "balancenet/federated/RoundLog.h"
#include "balancenet/federated/Strategy.h"
#include "balancenet/federated/process/TaskExchange.h"

namespace balancenet::federated {

// What a driver asks of the server (FederatedServer.cpp).
class RoundServer {
 public:
  virtual ~RoundServer() = default;
  virtual int64_t round() const = 0;    // rounds recorded so far
  virtual int64_t version() const = 0;  // aggregations so far (the model's version)
  // Whether the run goes on after `done` rounds (or versions): below --rounds and within the time budget.
  virtual bool goesOn(int64_t done) const = 0;
  virtual int clients() const = 0;  // every client known so far, by id 0 .. clients() - 1
  virtual bool alive(int client) const = 0;
  virtual bool anyAlive() const = 0;
  virtual void admitRejoined() = 0;    // clients that joined or rejoined take part from now on
  virtual void awaitSomeClient() = 0;  // every client is dead: wait for one to rejoin (throws after the join timeout)
  // The strategy's tasks for `round` sent with the global weights; their downloads added to `record`.
  virtual std::vector<ClientTask> sendTasks(int64_t round, RoundRecord& record) = 0;
  virtual size_t tasksOut() const = 0;
  virtual void collect(std::vector<Returned>& returned, std::vector<ClientRoundRecord>& lost) = 0;
  // Whether the update counts (not refused by UpdateCheck: `rejection` says why; taken by the strategy); its record's
  // status says what became of it. A counted update's speed goes into the client's estimate.
  virtual bool accepted(Returned& r, int64_t round, const std::optional<std::string>& rejection) = 0;
  virtual void aggregate(const std::vector<ClientUpdate>& updates) = 0;  // one server step, the version + 1
  virtual int64_t modelSize() const = 0;                                 // the flat model's numbers
  // The round's record, after which `roundsDone` rounds are recorded: evaluation, checkpoint, progress line.
  virtual void endRound(RoundRecord record, int64_t roundsDone) = 0;
};

class RoundDriver {
 public:
  virtual ~RoundDriver() = default;
  virtual void run(RoundServer& server) = 0;  // until the server's goesOn says no
};

// Synchronous rounds; an update's norm is checked against the round's others (UpdateCheck.h: beyond maxUpdateNorm,
// or with 0, beyond 10 x their median, it is rejected).
std::unique_ptr<RoundDriver> synchronousRounds(double maxUpdateNorm);
// fedbuff's buffered rounds of `buffer` (at least 1) accepted updates; there are no rounds to compare within, so an
// update's norm is checked against the recently accepted ones'.
std::unique_ptr<RoundDriver> bufferedRounds(int buffer, double maxUpdateNorm);

}  // namespace balancenet::federated
