// EnrolledRoster: the clients of `balancenet federate serve`: processes that enrol over the network with their
// own data (`federate join`), are accepted or refused on their model signature, and come and go. The server
// never waits for a client: one that enrols and does not open its channel takes part once it does. A client id is
// the server's: a client that enrols again under the same name gets its old id back and a new channel generation,
// also after the server itself was resumed from a checkpoint (restore). After the first clients, a thread of its own
// answers enrolments and opens channels as they come, also while a round runs or the server evaluates: a client that
// enrols during a long round trains from the next one (polled at the boundaries only, it waited two rounds, and one
// that came in the last two never trained).
#pragma once
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <c10/util/intrusive_ptr.h>

#include "balancenet/federated/Enrolment.h"
#include "balancenet/federated/process/ClientRoster.h"
#include "balancenet/federated/process/FederatedProcess.h"

namespace balancenet::federated {

class EnrolledRoster : public ClientRoster {
 public:
  // `served`: what the clients build (its seed included); `minClients`: the first round waits for so many.
  EnrolledRoster(c10::intrusive_ptr<c10d::Store> store, const ProcessSettings& settings, ServedModel served,
                 int minClients);
  // Publishes the model, then admits enrolments until minClients are connected (RuntimeFailure at the deadline).
  std::vector<Arrival> first(const RosterStart& start) override;
  // The enrolments that arrived since: each accepted (its channel formed) or refused with a reason.
  std::vector<Arrival> arrivals(const std::vector<bool>& connected) override;
  void restore(const std::vector<std::string>& names) override;
  int fixedClients() const override { return 0; }
  void close() override;
  ~EnrolledRoster() override;

 private:
  struct Known {
    std::string name;
    int64_t generation = 0;
    Enrolment enrolment;
    bool enrolled = false;  // in this run (a name restored from the checkpoint has not yet)
  };
  // An accepted client whose channel has not formed yet: polled at every call of arrivals, never waited for.
  struct Opening {
    std::unique_ptr<ChannelAcceptor> acceptor;
    std::chrono::steady_clock::time_point warnAfter;  // then one line says it is late (--peer-timeout)
    bool warned = false;
  };
  // Reads the new enrolments and polls the channels that are forming; what opened goes to ready_. Under mutex_.
  void poll();
  void pollInTheBackground();
  void stopPolling();
  void reply(int64_t k, const EnrolmentReply& r);
  void admit(int64_t k);
  void opened();
  void writePartition() const;

  c10::intrusive_ptr<c10d::Store> store_;
  const ProcessSettings& s_;
  ServedModel served_;
  int minClients_;
  ModelSignature signature_;
  std::vector<Known> known_;        // by client id
  std::map<int, Opening> opening_;  // by client id
  std::map<std::string, int> byName_;
  int restored_ = 0;           // ids known from the checkpoint of a resumed server
  int64_t counted_ = 0;        // requests counted so far
  std::set<int64_t> waiting_;  // counted requests whose record is not in the store yet
  std::chrono::steady_clock::time_point lastPoll_;
  std::vector<Arrival> ready_;  // channels formed since the last arrivals()
  std::mutex mutex_;            // the state above, between the server's thread and the poller
  std::atomic<bool> stop_{false};
  std::thread poller_;
};

}  // namespace balancenet::federated
