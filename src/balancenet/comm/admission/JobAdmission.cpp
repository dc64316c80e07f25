// Admission: a token check record, the world size and one claim per rank, all in the job's store.
#include "balancenet/comm/admission/JobAdmission.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <fmt/format.h>

#include "balancenet/comm/admission/JobToken.h"
#include "balancenet/core/Error.h"

namespace balancenet::comm {
namespace {

constexpr const char* kTokenRecordKey = "balancenet/job";
constexpr const char* kWorldSizeKey = "world-size";
constexpr const char* kAbortKey = "abort";

std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }
std::string text(const std::vector<uint8_t>& b) { return {b.begin(), b.end()}; }

// get() with the place's timeout, as a one-line failure when the value never comes.
std::string waitAndGet(c10d::Store& store, const std::string& key, const JobPlace& place, const char* what) {
  try {
    store.wait({key}, place.timeout);
    return text(store.get(key));
  } catch (const std::exception& e) {
    // The same phrase as a connection lost during set-up (Rendezvous.cpp): from here a stalled store, a
    // host that gave up and a store of another program look alike.
    throw RuntimeFailure(
        fmt::format("{}: no {} within {} s (is its host still running, and is it a balancenet job?): {}",
                    storeStoppedAnswering(place.where), what, place.timeout.count() / 1000.0, firstLine(e.what())));
  }
}

}  // namespace

std::string storeStoppedAnswering(const std::string& where) {
  return fmt::format("the job's store at {} stopped answering", where);
}

void publishJob(const c10::intrusive_ptr<c10d::Store>& root, const JobPlace& place, int worldSize) {
  if (worldSize > 0) {
    c10d::PrefixStore job(jobKeyPrefix(place.token), root);
    publishWorldSize(job, worldSize);
  }
  root->set(kTokenRecordKey, bytes(tokenCheckRecord(place.token)));
}

void publishWorldSize(c10d::Store& job, int worldSize) { job.set(kWorldSizeKey, bytes(std::to_string(worldSize))); }

c10::intrusive_ptr<c10d::Store> admit(const c10::intrusive_ptr<c10d::Store>& root, const JobPlace& place) {
  const std::string record = waitAndGet(*root, kTokenRecordKey, place, "job record");
  if (!tokenMatches(record, place.token))
    throw UsageError(
        fmt::format("job token does not match the job at {}{}: give every process the job's "
                    "--job-token (or BALANCENET_JOB_TOKEN)",
                    place.where, place.token.empty() ? " (this process has none)" : ""));
  return c10::make_intrusive<c10d::PrefixStore>(jobKeyPrefix(place.token), root);
}

void checkWorldSize(c10d::Store& job, const JobPlace& place, int worldSize, std::optional<int> rank) {
  const std::string published = waitAndGet(job, kWorldSizeKey, place, "world size");
  if (published == std::to_string(worldSize)) return;
  const std::string who = rank ? fmt::format("rank {}", *rank) : "a host's launcher";
  if (rank)
    job.set(kAbortKey, bytes(fmt::format("rendezvous aborted: {} was started for {} workers, but this job has {}", who,
                                         worldSize, published)));
  throw UsageError(
      fmt::format("world size mismatch: this process was started for {} workers (WORLD_SIZE, or "
                  "--nnodes x --nproc-per-node) but the job at {} has {}",
                  worldSize, place.where, published));
}

void claimRank(c10d::Store& job, const JobPlace& place, int rank) {
  if (job.add(fmt::format("claimed/{}", rank), 1) == 1) return;
  throw UsageError(
      fmt::format("rank {} has already joined the job at {}: two workers were started with RANK={}, "
                  "or a second job uses the same --master-port",
                  rank, place.where, rank));
}

void throwIfAborted(c10d::Store& job) {
  if (job.check({kAbortKey})) throw UsageError(text(job.get(kAbortKey)));
}

}  // namespace balancenet::comm
