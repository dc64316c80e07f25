// Tasks out and answers back over the clients' channels, polled: the server's loop never waits on one client.
#include "balancenet/federated/process/TaskExchange.h"

#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/Stopwatch.h"

namespace balancenet::federated {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

TaskExchange::TaskExchange(int64_t modelBytes, std::chrono::milliseconds peerTimeout) : modelBytes_(modelBytes) {
  timeoutRule_.slackS = peerTimeout.count() / 1000.0;
}

void TaskExchange::attach(int client, std::unique_ptr<ClientChannel> channel) {
  const auto c = static_cast<size_t>(client);
  if (c >= channels_.size()) channels_.resize(c + 1);
  channels_[c] = std::move(channel);
}

bool TaskExchange::alive(int client) const {
  return static_cast<size_t>(client) < channels_.size() && channels_[client] != nullptr;
}

bool TaskExchange::anyAlive() const {
  for (const auto& ch : channels_)
    if (ch) return true;
  return false;
}

std::vector<bool> TaskExchange::connected() const {
  std::vector<bool> connected;
  for (const auto& ch : channels_) connected.push_back(ch != nullptr);
  return connected;
}

void TaskExchange::dispatch(const ClientTask& task, const MessageHeader& header, const at::Tensor& global,
                            const TaskTiming& timing, int64_t shardSamples) {
  auto& channel = channels_.at(task.client);
  flights_[task.client] = Flight{task,
                                 header.round,
                                 header.version,
                                 shardSamples,
                                 Clock::now(),
                                 giveUpSeconds(timing, timeoutRule_),
                                 expectedComputeSeconds(timing, timeoutRule_),
                                 channel->exchangeLater(header, global, global.numel())};
}

Returned TaskExchange::returnedFrom(int client, const Flight& f, const Message& m) const {
  if (m.header.kind != MessageKind::Update || m.header.round != f.round)
    throw RuntimeFailure(fmt::format("client {} answered out of turn", client));
  Returned r;
  auto& u = r.update;
  u.client = client;
  u.delta = m.model;
  u.assignedSteps = f.task.localSteps;
  u.doneSteps = m.header.doneSteps;
  u.samples = m.header.samples;
  u.shardSamples = f.shardSamples;
  u.baseVersion = f.baseVersion;
  u.computeSeconds = m.header.computeSeconds;
  r.record = {client, u.assignedSteps, u.doneSteps, u.samples, modelBytes_, secondsSince(f.sentAt), u.computeSeconds, 0,
              "ok"};
  if (m.header.evalSamples > 0) r.evaluation = {client, m.header.evalSamples, m.header.evalAccuracy, m.header.evalLoss};
  return r;
}

void TaskExchange::lose(int client, int64_t round, const std::string& why) {
  spdlog::warn("client {} died; left out of round {} ({})", client, round, why);
  channels_[client].reset();
}

void TaskExchange::collect(std::vector<Returned>& returned, std::vector<ClientRoundRecord>& lost) {
  for (auto it = flights_.begin(); it != flights_.end();) {
    const int client = it->first;
    Flight& f = it->second;
    const bool ready = f.reply.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    const bool overdue = secondsSince(f.sentAt) > f.giveUpS;
    if (!ready && !overdue) {
      ++it;
      continue;
    }
    ClientRoundRecord dead{client, f.task.localSteps, 0, 0, 0, secondsSince(f.sentAt), 0, 0, "dead"};
    if (!ready) {
      spdlog::warn("client {} gave no answer in {:.1f} s (expected {:.1f} s); left out of round {}", client,
                   secondsSince(f.sentAt), f.expectedS, f.round);
      channels_[client].reset();
      lost.push_back(dead);
    } else {
      try {
        returned.push_back(returnedFrom(client, f, f.reply.get()));
      } catch (const std::exception& e) {
        lose(client, f.round, firstLine(e.what()));
        lost.push_back(dead);
      }
    }
    it = flights_.erase(it);
  }
}

void TaskExchange::stopClients(std::chrono::milliseconds atMost) {
  const auto start = Clock::now();
  while (!flights_.empty() && Clock::now() - start < atMost) {
    std::vector<Returned> returned;
    std::vector<ClientRoundRecord> lost;
    collect(returned, lost);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  MessageHeader stop;
  stop.kind = MessageKind::Stop;
  for (auto& channel : channels_) {
    if (!channel) continue;
    try {
      channel->send(stop, {});
    } catch (const std::exception& e) {
      spdlog::debug("client {}: the stop message did not arrive: {}", channel->client(), firstLine(e.what()));
    }
  }
}

}  // namespace balancenet::federated
