// TaskExchange: the server's side of its clients' channels. A task and the global weights go out to a client and
// its answer comes back on a thread of their own, so that a client that is gone or stopped never blocks the
// server: it shows in collect() as dead (its channel broke, or it gave no answer by its give-up time,
// RoundTimeout.h).
#pragma once
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "balancenet/federated/RoundLog.h"
#include "balancenet/federated/RoundTimeout.h"
#include "balancenet/federated/Strategy.h"
#include "balancenet/federated/process/ClientChannel.h"

namespace balancenet::federated {

// What came back from a client: its update and its line in the round's record.
struct Returned {
  ClientUpdate update;
  ClientRoundRecord record;
  std::optional<ClientEvaluationRecord> evaluation;  // its held-out samples under the model it received
};

class TaskExchange {
 public:
  // modelBytes: one message's bytes (header and flat model); peerTimeout: --peer-timeout, the slack of every
  // give-up time.
  TaskExchange(int64_t modelBytes, std::chrono::milliseconds peerTimeout);

  // A client's channel, new or after it rejoined (a new generation); it replaces a dead one.
  void attach(int client, std::unique_ptr<ClientChannel> channel);
  bool alive(int client) const;
  bool anyAlive() const;
  bool busy(int client) const { return flights_.count(client) > 0; }  // a task is out at it
  std::vector<bool> connected() const;                                // by client id: alive
  size_t tasksOut() const { return flights_.size(); }
  int64_t modelBytes() const { return modelBytes_; }

  // Sends `task` (its header: round, version, steps, ...) with `global` and starts waiting for the answer.
  // `timing` gives its give-up time; `shardSamples`: the client's shard, FedAvg's weight, put into its update.
  void dispatch(const ClientTask& task, const MessageHeader& header, const at::Tensor& global, const TaskTiming& timing,
                int64_t shardSamples);

  // The tasks that ended since the last call: answers in `returned`, deaths as "dead" lines in `lost` (their channel
  // closed: the client takes part again once it rejoins).
  void collect(std::vector<Returned>& returned, std::vector<ClientRoundRecord>& lost);

  // The last answers, for at most `atMost` (dropped: the run is over), then a stop message to every live client.
  void stopClients(std::chrono::milliseconds atMost);

 private:
  // A task out at a client.
  struct Flight {
    ClientTask task;
    int64_t round = 0;
    int64_t baseVersion = 0;
    int64_t shardSamples = 0;
    std::chrono::steady_clock::time_point sentAt;
    double giveUpS = 0;    // silent this long after sentAt: dead
    double expectedS = 0;  // the compute the server expected of it
    std::future<Message> reply;
  };

  Returned returnedFrom(int client, const Flight& f, const Message& m) const;
  void lose(int client, int64_t round, const std::string& why);

  const int64_t modelBytes_;
  TimeoutRule timeoutRule_;
  std::vector<std::unique_ptr<ClientChannel>> channels_;  // by client id; null: dead (until it rejoins)
  std::map<int, Flight> flights_;
};

}  // namespace balancenet::federated
