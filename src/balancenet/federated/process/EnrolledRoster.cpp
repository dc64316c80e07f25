// The enrolled clients' roster (see EnrolledRoster.h).
//
// Enrolment: a client adds 1 to serve/requests (its request number k), writes its enrolment under
// serve/request/k and waits for serve/reply/k. The roster's poller (every 50 ms, and at each round boundary) reads
// the new requests, checks each (model signature, --model, samples) and replies; for an accepted one it polls the
// client's channel from then on (the client connects as soon as it reads its reply), and the server admits the
// client at the first boundary after the channel formed. It never waits for one: a client that enrols and does not
// connect costs no round time.
#include "balancenet/federated/process/EnrolledRoster.h"

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <thread>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "balancenet/core/Error.h"
#include "balancenet/federated/LabelPartition.h"
#include "balancenet/federated/process/ModelWeights.h"

namespace balancenet::federated {
EnrolledRoster::EnrolledRoster(c10::intrusive_ptr<c10d::Store> store, const ProcessSettings& settings,
                               ServedModel served, int minClients)
    : store_(std::move(store)), s_(settings), served_(std::move(served)), minClients_(minClients) {}

std::vector<Arrival> EnrolledRoster::first(const RosterStart& start) {
  signature_ = modelSignature(start.net);
  served_.name = start.modelName;
  if (start.train.spec().target == data::TargetKind::Class) served_.classes = start.train.spec().classes;
  store_->set(kServedModelKey, recordBytes(encodeServedModel(served_)));
  spdlog::info("federate serve: waiting for {} clients to enrol ({} parameters)", minClients_, signature_.size);
  std::vector<Arrival> out;
  std::set<int> connected;
  while (static_cast<int>(connected.size()) < minClients_) {
    if (std::chrono::steady_clock::now() > start.deadline)
      throw RuntimeFailure(fmt::format("only {} of --min-clients {} clients enrolled within {:.0f} s (--join-timeout)",
                                       connected.size(), minClients_, s_.joinTimeout.count() / 1000.0));
    for (auto& a : arrivals({})) {
      connected.insert(a.client);
      out.push_back(std::move(a));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  pollInTheBackground();
  return out;
}

std::vector<Arrival> EnrolledRoster::arrivals(const std::vector<bool>& /*connected*/) {
  std::lock_guard<std::mutex> lock(mutex_);
  poll();
  return std::exchange(ready_, {});
}

void EnrolledRoster::pollInTheBackground() {
  poller_ = std::thread([this] {
    while (!stop_) {
      try {
        std::lock_guard<std::mutex> lock(mutex_);
        poll();
      } catch (const std::exception& e) {  // the store is going: the server is ending
        spdlog::debug("enrolments: {}", firstLine(e.what()));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
}

void EnrolledRoster::stopPolling() {
  stop_ = true;
  if (poller_.joinable()) poller_.join();
}

EnrolledRoster::~EnrolledRoster() { stopPolling(); }

void EnrolledRoster::poll() {
  // An asynchronous server asks between every two updates: the store is read at most every 20 ms.
  const auto now = std::chrono::steady_clock::now();
  if (now - lastPoll_ < std::chrono::milliseconds(20)) return;
  lastPoll_ = now;
  // A known client enrolling again replaces its channel, live or not: its process was restarted.
  const int64_t count = store_->add(kRequestCountKey, 0);
  for (int64_t k = counted_ + 1; k <= count; ++k) waiting_.insert(k);
  counted_ = count;
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (!store_->check({requestKey(*it)})) {
      ++it;
      continue;
    }
    admit(*it);
    it = waiting_.erase(it);
  }
  opened();
}

void EnrolledRoster::restore(const std::vector<std::string>& names) {
  std::lock_guard<std::mutex> lock(mutex_);
  known_.clear();
  byName_.clear();
  for (const auto& name : names) {
    byName_.emplace(name, static_cast<int>(known_.size()));
    known_.push_back({name, 0, {}, false});
  }
  restored_ = static_cast<int>(names.size());
}

void EnrolledRoster::reply(int64_t k, const EnrolmentReply& r) {
  store_->set(replyKey(k), recordBytes(encodeReply(r)));
}

void EnrolledRoster::admit(int64_t k) {
  Enrolment e;
  try {
    e = decodeEnrolment(recordText(store_->get(requestKey(k))));
  } catch (const std::exception& ex) {
    spdlog::warn("enrolment {} refused: {}", k, firstLine(ex.what()));
    reply(k, {false, -1, "its enrolment could not be read"});
    return;
  }
  if (auto why = enrolmentRefusal(e, served_.name, signature_)) {
    spdlog::warn("refused client '{}': {}", e.name, *why);
    reply(k, {false, -1, *why});
    return;
  }
  auto [entry, fresh] = byName_.try_emplace(e.name, static_cast<int>(known_.size()));
  const int id = entry->second;
  if (fresh) known_.push_back({e.name, 0, e, false});
  known_[id].enrolment = e;
  // A client enrolling again while its channel was still to form: generations already tried are not tried again.
  const auto pending = opening_.find(id);
  const int64_t after = pending != opening_.end() ? pending->second.acceptor->tried() : known_[id].generation;
  opening_[id] = Opening{std::make_unique<ChannelAcceptor>(store_, id, after, s_.channel),
                         std::chrono::steady_clock::now() + s_.peerTimeout};
  reply(k, {true, id, ""});  // the client connects as soon as it reads it
}

void EnrolledRoster::opened() {
  bool any = false;
  const auto now = std::chrono::steady_clock::now();
  for (auto it = opening_.begin(); it != opening_.end();) {
    const int id = it->first;
    Known& client = known_[id];
    auto channel = it->second.acceptor->poll();
    if (!channel) {
      if (!it->second.warned && now > it->second.warnAfter) {
        spdlog::warn(
            "client {} ({}) enrolled but has not opened its channel within {:.0f} s (--peer-timeout); it "
            "takes part once it does",
            id, client.name, s_.peerTimeout.count() / 1000.0);
        it->second.warned = true;
      }
      ++it;
      continue;
    }
    client.generation = channel->generation();
    if (!client.enrolled)
      spdlog::info("client {} ({}) enrolled{}: {} samples", id, client.name,
                   id < restored_ ? " under its id of the checkpoint" : "", client.enrolment.samples);
    client.enrolled = true;
    ready_.push_back(Arrival{id, client.name, client.enrolment.samples, std::move(channel)});
    any = true;
    it = opening_.erase(it);
  }
  if (any) writePartition();
}

void EnrolledRoster::writePartition() const {
  std::vector<std::vector<int64_t>> counts;
  std::vector<std::string> names;
  for (const auto& c : known_) {
    counts.push_back(c.enrolment.labelCounts);
    names.push_back(c.name);
  }
  writePartitionCsv(s_.runDir + "/partition.csv", counts, names);
}

void EnrolledRoster::close() {
  stopPolling();
  // Whoever still waits for an answer (or enrols now) reads it and exits with one line.
  store_->set(kServerFinishedKey, recordBytes("1"));
}

}  // namespace balancenet::federated
