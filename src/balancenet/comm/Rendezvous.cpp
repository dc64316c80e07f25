// Rendezvous over a c10d store: admission (token, world size, one claim per rank), then an arrival check so
// a missing peer is named, not a hang.
#include "balancenet/comm/Rendezvous.h"

#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <thread>

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "balancenet/comm/GroupPrefixes.h"
#include "balancenet/comm/SetupWatchdog.h"
#include "balancenet/comm/admission/ClosedJob.h"
#include "balancenet/comm/admission/JobAdmission.h"
#include "balancenet/core/DetachedTask.h"
#include "balancenet/core/Error.h"

namespace balancenet::comm {
namespace {

// Whether something at host:port accepts a TCP connection within a second (closed at once).
bool acceptsConnections(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* to = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &to) != 0) return false;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  bool connected = false;
  if (fd >= 0 && (::connect(fd, to->ai_addr, to->ai_addrlen) == 0 || errno == EINPROGRESS)) {
    pollfd p{fd, POLLOUT, 0};
    int error = 0;
    socklen_t length = sizeof error;
    connected = ::poll(&p, 1, 1000) == 1 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0;
  }
  if (fd >= 0) ::close(fd);
  freeaddrinfo(to);
  return connected;
}

// c10d 2.x's client pings the store inside its constructor and waits for the echo with no timeout: a port
// whose listener never answers would hold the constructor for good. It runs on a thread of its own, given up
// (left to end by itself) past c10d's own connection attempts (two of the timeout each, apart by up to the
// timeout), after which a port that accepts connections is a store that does not answer, and one that does
// not is unreachable: a busy machine can stretch c10d's attempts past any margin, so the port decides.
c10::intrusive_ptr<c10d::TCPStore> connectWithin(const std::string& host, const c10d::TCPStoreOptions& opts) {
  auto connecting = runDetached([host, opts] { return c10::make_intrusive<c10d::TCPStore>(host, opts); });
  const auto limit = 2 * opts.timeout + std::chrono::seconds(1);
  if (connecting.wait_for(limit) == std::future_status::ready) return connecting.get();
  const std::string where = fmt::format("{}:{}", host, opts.port);
  if (!acceptsConnections(host, opts.port))
    throw RuntimeFailure(
        fmt::format("cannot reach the rendezvous store at {} within {} s: nothing accepts connections "
                    "there",
                    where, opts.timeout.count() / 1000.0));
  throw RuntimeFailure(fmt::format("{}: no reply to its first request within {} s (is it a balancenet job?)",
                                   storeStoppedAnswering(where), limit.count() / 1000.0));
}

c10::intrusive_ptr<c10d::Store> openTcpStore(const std::string& host, int port, bool server,
                                             std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions opts;
  opts.port = static_cast<std::uint16_t>(port);
  opts.isServer = server;
  opts.waitWorkers = false;
  opts.timeout = timeout;
  try {
    auto store = server ? c10::make_intrusive<c10d::TCPStore>(host, opts) : connectWithin(host, opts);
    // Never destroyed: destroying a server joins c10d's daemon thread, which a stranger holding half a
    // message keeps in recv() for as long as it likes, so the process could not exit. The OS closes the
    // sockets when it does.
    if (server) c10::raw::intrusive_ptr::incref(store.get());
    return store;
  } catch (const RuntimeFailure&) {
    throw;
  } catch (const std::exception& e) {
    const std::string why = firstLine(e.what());
    if (server)
      throw RuntimeFailure(fmt::format("cannot serve the rendezvous store on port {} (is it in use?): {}", port, why));
    throw RuntimeFailure(fmt::format("cannot reach the rendezvous store at {}:{} within {} s: {}", host, port,
                                     timeout.count() / 1000.0, why));
  }
}

// The job's store as this process sees it: `server` hosts it (for a file store: nothing to host).
c10::intrusive_ptr<c10d::Store> openStore(const RendezvousOptions& o, bool server) {
  if (o.storeFile.empty()) {
    requireClosedJob(o);  // every path to a TCP store passes here, a Python session's too
    return openTcpStore(o.masterAddr, o.masterPort, server, o.timeout);
  }
  try {
    // -1 workers: c10d never deletes the file; the launcher removes its private directory.
    return c10::make_intrusive<c10d::FileStore>(o.storeFile, -1);
  } catch (const std::exception& e) {
    throw RuntimeFailure(fmt::format("cannot open the job's store file {}: {}", o.storeFile, firstLine(e.what())));
  }
}

JobPlace placeOf(const RendezvousOptions& o) {
  return {o.jobToken, o.storeFile.empty() ? fmt::format("{}:{}", o.masterAddr, o.masterPort) : "its private store file",
          o.timeout};
}

// One phrase for a store that went silent, whichever way node 1 finds out: its request timed out, or the
// store's host gave up first and closed the connection under c10d's client thread (a race seen in tests).
std::string storeStopped(const JobPlace& place) { return storeStoppedAnswering(place.where); }

// The longest a whole rendezvous may take: arrival within the timeout, then Gloo's connections within it.
std::chrono::milliseconds setupLimit(const RendezvousOptions& o) { return 2 * o.timeout + std::chrono::seconds(10); }

// Every rank announces itself, then waits for the others; on timeout the missing ranks are listed.
void waitForAllRanks(c10d::Store& store, int rank, int worldSize, std::chrono::milliseconds timeout) {
  store.set(fmt::format("arrived/{}", rank), std::vector<uint8_t>{1});
  std::vector<std::string> keys;
  for (int r = 0; r < worldSize; ++r) keys.push_back(fmt::format("arrived/{}", r));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!store.check(keys)) {
    throwIfAborted(store);
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

// A job restarted whole meets under its attempt's keys, away from the dead attempt's claims and addresses.
static c10::intrusive_ptr<c10d::Store> forAttempt(c10::intrusive_ptr<c10d::Store> job, int attempt) {
  return attempt > 0 ? scopedStore(attemptPrefix(attempt), std::move(job)) : job;
}

std::unique_ptr<Communicator> rendezvous(const RendezvousOptions& o) {
  if (o.rank < 0 || o.rank >= o.worldSize)
    throw UsageError(fmt::format("rank {} is outside the world of {} ranks", o.rank, o.worldSize));
  const JobPlace place = placeOf(o);
  SetupWatchdog watchdog(setupLimit(o), fmt::format("the rendezvous of rank {} at {}", o.rank, place.where),
                         storeStopped(place));
  auto root = openStore(o, o.hostStore);
  if (o.hostStore) {
    publishJob(root, place, o.worldSize);
    warnIfOpen(o, o.masterPort);
  }
  auto admitted = admit(root, place);
  checkWorldSize(*admitted, place, o.worldSize, o.rank);
  auto job = forAttempt(admitted, o.attempt);
  claimRank(*job, place, o.rank);
  waitForAllRanks(*job, o.rank, o.worldSize, o.timeout);
  return joinGroupUnder(kJobGroupPrefix, job, o.rank, o.worldSize, o.opTimeout(), o.glooHost(), o.iface, o.glooThreads);
}

c10::intrusive_ptr<c10d::Store> connectJobStore(const RendezvousOptions& o) {
  SetupWatchdog watchdog(setupLimit(o), "joining the job's store at " + placeOf(o).where, storeStopped(placeOf(o)));
  return scopedStore(kJobGroupPrefix, forAttempt(admit(openStore(o, false), placeOf(o)), o.attempt));
}

c10::intrusive_ptr<c10d::Store> admitLauncher(const RendezvousOptions& o) {
  const JobPlace place = placeOf(o);
  SetupWatchdog watchdog(setupLimit(o), "checking the job's store at " + place.where, storeStopped(place));
  return admit(openStore(o, false), place);
}

std::unique_ptr<Communicator> joinGroupUnder(const std::string& prefix, const c10::intrusive_ptr<c10d::Store>& store,
                                             int rank, int worldSize, std::chrono::milliseconds timeout,
                                             const std::string& host, const std::string& iface, int glooThreads) {
  return joinGroup(scopedStore(prefix, store), rank, worldSize, timeout, host, iface, glooThreads);
}

std::unique_ptr<Communicator> sideGroup(Communicator& main, const std::string& prefix, const RendezvousOptions& o) {
  return joinGroupUnder(prefix, main.sharedStore(), main.rank(), main.size(), o.opTimeout(), o.glooHost(), o.iface,
                        o.glooThreads);
}

StoreServer::StoreServer(const RendezvousOptions& o) {
  store_ = openStore(o, /*server=*/true);
  auto* tcp = dynamic_cast<c10d::TCPStore*>(store_.get());
  port_ = tcp ? tcp->getPort() : 0;
  publishJob(store_, placeOf(o), o.worldSize);
  warnIfOpen(o, port_);
}

StoreServer::~StoreServer() = default;

int StoreServer::port() const { return port_; }

}  // namespace balancenet::comm
