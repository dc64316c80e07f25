// Rendezvous over c10d's TCPStore, with an arrival check so a missing peer is named, not a hang.
#include "balancenet/comm/Rendezvous.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <thread>

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::comm {
namespace {

constexpr const char* kGroupPrefix = "pg";

c10::intrusive_ptr<c10d::TCPStore> openStore(const std::string& host, int port, bool server,
                                            std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions opts;
  opts.port = static_cast<std::uint16_t>(port);
  opts.isServer = server;
  opts.waitWorkers = false;
  opts.timeout = timeout;
  try {
    return c10::make_intrusive<c10d::TCPStore>(host, opts);
  } catch (const std::exception& e) {
    const std::string why = firstLine(e.what());
    if (server)
      throw RuntimeFailure(fmt::format("cannot serve the rendezvous store on port {} (is it in use?): {}", port, why));
    throw RuntimeFailure(fmt::format("cannot reach the rendezvous store at {}:{} within {} s: {}", host, port,
                                     timeout.count() / 1000.0, why));
  }
}

// Every rank announces itself, then waits for the others; on timeout the missing ranks are listed.
void waitForAllRanks(c10d::Store& store, int rank, int worldSize, std::chrono::milliseconds timeout) {
  store.set(fmt::format("arrived/{}", rank), {1});
  std::vector<std::string> keys;
  for (int r = 0; r < worldSize; ++r) keys.push_back(fmt::format("arrived/{}", r));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!store.check(keys)) {
    if (std::chrono::steady_clock::now() > deadline) {
      std::string missing;
      for (int r = 0; r < worldSize; ++r)
        if (!store.check({keys[r]})) missing += (missing.empty() ? "" : ",") + std::to_string(r);
      throw RuntimeFailure(fmt::format("rendezvous timed out after {} s: rank(s) {} of {} never arrived",
                                       timeout.count() / 1000.0, missing, worldSize));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

bool isLoopback(const std::string& host) { return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1"; }

std::unique_ptr<Communicator> joinGroup(const c10::intrusive_ptr<c10d::Store>& store, int rank, int worldSize,
                                        std::chrono::milliseconds timeout, const std::string& host,
                                        const std::string& iface) {
  auto opts = c10d::ProcessGroupGloo::Options::create(timeout);
  try {
    if (!iface.empty())
      opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(iface));
    else if (isLoopback(host))
      opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    else
      opts->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    opts->threads = 2;
    auto group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, worldSize, opts);
    return std::make_unique<Communicator>(store, group);
  } catch (const std::exception& e) {
    throw RuntimeFailure(fmt::format("rank {} could not connect to its peers: {}", rank, firstLine(e.what())));
  }
}

std::unique_ptr<Communicator> rendezvous(const RendezvousOptions& o) {
  if (o.rank < 0 || o.rank >= o.worldSize)
    throw UsageError(fmt::format("rank {} is outside the world of {} ranks", o.rank, o.worldSize));
  c10::intrusive_ptr<c10d::Store> store = openStore(o.masterAddr, o.masterPort, o.hostStore, o.timeout);
  waitForAllRanks(*store, o.rank, o.worldSize, o.timeout);
  return joinGroup(c10::make_intrusive<c10d::PrefixStore>(kGroupPrefix, store), o.rank, o.worldSize, o.opTimeout(),
                   o.masterAddr, o.iface);
}

c10::intrusive_ptr<c10d::Store> connectJobStore(const RendezvousOptions& o) {
  return c10::make_intrusive<c10d::PrefixStore>(kGroupPrefix, openStore(o.masterAddr, o.masterPort, false, o.timeout));
}

std::unique_ptr<Communicator> sideGroup(Communicator& main, const std::string& name, const RendezvousOptions& o) {
  auto scoped = c10::make_intrusive<c10d::PrefixStore>(name, main.sharedStore());
  return joinGroup(scoped, main.rank(), main.size(), o.opTimeout(), o.masterAddr, o.iface);
}

StoreServer::StoreServer(const std::string& host, int port, std::chrono::milliseconds timeout) {
  auto tcp = openStore(host, port, /*server=*/true, timeout);
  port_ = tcp->getPort();
  store_ = tcp;
}

StoreServer::~StoreServer() = default;

int StoreServer::port() const { return port_; }

}  // namespace balancenet::comm
