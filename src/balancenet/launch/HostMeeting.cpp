// The hosts' meeting: claims and counts under "hosts/" in the job's store, then the agreed layout.
#include "balancenet/launch/HostMeeting.h"

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "balancenet/comm/admission/JobAdmission.h"
#include "balancenet/core/Error.h"

namespace balancenet::launch {
namespace {

constexpr const char* kAbortKey = "hosts/abort";

std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }
std::string text(const std::vector<uint8_t>& b) { return {b.begin(), b.end()}; }

// The first host to find a disagreement tells the others, who would otherwise wait for a host that never comes.
[[noreturn]] void abortMeeting(c10d::Store& job, const std::string& why) {
  job.set(kAbortKey, bytes(why));
  throw UsageError(why);
}

}  // namespace

namespace {

// Waits until every host has set key(k), calling arrived(k) once for each as it comes; the meeting's abort is
// thrown at once, a host missing at `deadline` is named.
template <typename Arrived>
void waitForEveryHost(c10d::Store& job, const std::string& what, const job::LaunchOptions& launch,
                      const std::string& where, std::chrono::steady_clock::time_point deadline,
                      std::chrono::milliseconds timeout, Arrived arrived) {
  std::vector<bool> seen(launch.nnodes, false);
  for (int waiting = launch.nnodes; waiting > 0;) {
    if (job.check({kAbortKey})) throw UsageError(text(job.get(kAbortKey)));
    for (int k = 0; k < launch.nnodes && (k == 0 || seen[0]); ++k)  // host 0's first: the job's reference
      if (!seen[k] && job.check({fmt::format("hosts/{}/{}", what, k)})) {
        arrived(k, text(job.get(fmt::format("hosts/{}/{}", what, k))));
        seen[k] = true;
        --waiting;
      }
    if (waiting == 0) return;
    if (std::chrono::steady_clock::now() > deadline) {
      std::vector<int> missing;
      for (int k = 0; k < launch.nnodes; ++k)
        if (!seen[k]) missing.push_back(k);
      throw RuntimeFailure(fmt::format("host(s) {} of --nnodes {} never reached the job's store at {} within {} s",
                                       fmt::join(missing, ","), launch.nnodes, where, timeout.count() / 1000.0));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Two rounds: every host's count (and --nnodes), then every host's consent to the layout they add up to, so a
// host that refuses it stops the others before any of them starts a worker.
void meetOnce(c10d::Store& job, const std::string& where, job::LaunchOptions& launch,
              std::chrono::milliseconds timeout) {
  const int nnodes = launch.nnodes, me = launch.nodeRank;
  if (job.add(fmt::format("hosts/claimed/{}", me), 1) != 1)
    abortMeeting(job, fmt::format("two hosts were started with --node-rank {} for the job at {}: give each host its "
                                  "own node rank in [0, {})",
                                  me, where, nnodes));
  job.set(fmt::format("hosts/workers/{}", me), bytes(fmt::format("{} {}", launch.nprocPerNode, nnodes)));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<int> counts(nnodes, 0);
  waitForEveryHost(job, "workers", launch, where, deadline, timeout, [&](int k, const std::string& value) {
    int theirNodes = 0;
    std::sscanf(value.c_str(), "%d %d", &counts[k], &theirNodes);
    if (theirNodes == nnodes) return;
    const auto why = fmt::format(
        "host {} was started with --nnodes {} but host {} with --nnodes {}: give every host "
        "the same --nnodes",
        k, theirNodes, me, nnodes);
    // Against host 0 this host is the odd one, and may be no member at all (--node-rank beyond the job's hosts):
    // it goes alone. A member that disagrees with host 0 stops every host.
    if (k == 0) throw UsageError(why);
    abortMeeting(job, why);
  });
  try {
    agreeOnHosts(launch, counts);
  } catch (const UsageError& e) {
    abortMeeting(job, fmt::format("host {}: {}", me, e.what()));
  }
  job.set(fmt::format("hosts/agreed/{}", me), bytes("1"));
  waitForEveryHost(job, "agreed", launch, where, deadline, timeout, [](int, const std::string&) {});
}

}  // namespace

void meetHosts(c10d::Store& job, const std::string& where, job::LaunchOptions& launch,
               std::chrono::milliseconds timeout) {
  try {
    meetOnce(job, where, launch, timeout);
  } catch (const UsageError&) {
    throw;
  } catch (const RuntimeFailure&) {
    throw;
  } catch (const std::exception& e) {
    // c10d's own words ("Socket Timeout") for a store a stranger stalls, or whose host went away: named as the
    // workers name it (comm/Rendezvous.cpp).
    throw RuntimeFailure(
        fmt::format("{} while the hosts met: {}", comm::storeStoppedAnswering(where), firstLine(e.what())));
  }
}

void agreeOnHosts(job::LaunchOptions& launch, const std::vector<int>& counts) {
  const auto agreed = job::hostLayout(counts);
  const std::string list = job::workersPerHostText(counts);
  if (!launch.hostWorkers.empty()) {
    require(launch.hostWorkers == counts,
            fmt::format("the hosts run {} workers but this host's --nproc-per-node {} says otherwise: give every host "
                        "the same list",
                        list, job::workersPerHostText(launch.hostWorkers)));
  } else {
    const int assumed = launch.nnodes * launch.nprocPerNode;
    require(agreed.world == assumed || launch.assumedWorldFlags.empty(),
            fmt::format("the hosts run {} = {} workers, not the --nnodes {} x --nproc-per-node {} = {} that {} "
                        "{} checked against: give every host --nproc-per-node {}",
                        fmt::join(counts, "+"), agreed.world, launch.nnodes, launch.nprocPerNode, assumed,
                        fmt::join(launch.assumedWorldFlags, ", "),
                        launch.assumedWorldFlags.size() == 1 ? "was" : "were", list));
  }
  launch.hostWorkers = counts;
}

}  // namespace balancenet::launch
