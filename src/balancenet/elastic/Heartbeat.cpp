// Heartbeat thread and its reader.
#include "balancenet/elastic/Heartbeat.h"

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <sstream>

#include <fmt/format.h>

namespace balancenet::elastic {
namespace {

std::string beatKey(int member) { return fmt::format("elastic/hb/{}", member); }

int64_t unixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Heartbeat::Heartbeat(c10::intrusive_ptr<c10d::Store> store, int member, std::string host)
    : store_(std::move(store)), member_(member), host_(std::move(host)) {
  beat();  // a member is never "never reported" once it exists
  thread_ = std::thread([this] { run(); });
}

bool Heartbeat::beat() {
  try {
    const std::string value = fmt::format("{} {} {}", step_.load(), unixMs(), host_);
    store_->set(beatKey(member_), std::vector<uint8_t>(value.begin(), value.end()));
    return true;
  } catch (const std::exception&) {
    return false;  // the store is gone: the job is over or its host died; the main thread will see it
  }
}

void Heartbeat::setStep(int64_t step) {
  if (step_.exchange(step) != step) beat();
}

Heartbeat::~Heartbeat() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Heartbeat::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    lock.unlock();
    if (!beat()) return;
    lock.lock();
    wake_.wait_for(lock, kHeartbeatEvery, [this] { return stop_; });
  }
}

std::optional<Beat> readBeat(c10d::Store& store, int member) {
  const auto key = beatKey(member);
  if (!store.check({key})) return std::nullopt;
  const auto bytes = store.get(key);
  std::istringstream in(std::string(bytes.begin(), bytes.end()));
  int64_t step = 0, at = 0;
  if (!(in >> step >> at)) return std::nullopt;
  std::string host;
  in >> host;  // absent on one machine
  return Beat{step, (unixMs() - at) / 1000.0, host};
}

}  // namespace balancenet::elastic
