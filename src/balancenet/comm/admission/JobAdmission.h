// JobAdmission: who may take part in a job, checked on the store before any rank announces itself.
#pragma once
#include <chrono>
#include <optional>
#include <string>

#include <c10/util/intrusive_ptr.h>

namespace c10d {
class Store;
}

namespace balancenet::comm {

// Where the job's store is, for messages ("127.0.0.1:29500", "the job's private store file").
struct JobPlace {
  std::string token;
  std::string where;
  std::chrono::milliseconds timeout{60000};
};

// "the job's store at WHERE stopped answering": one phrase for a store gone silent, whichever process finds out and
// however (a request timed out, the connection closed under c10d's client, the launchers' meeting stalled).
std::string storeStoppedAnswering(const std::string& where);

// By the store's host, right after it starts serving: the job's world size (under the token's key
// prefix), then the token check record (at the root, where a process without the token finds it).
// worldSize 0: not known yet (hosts of different sizes meet first); publishWorldSize follows.
void publishJob(const c10::intrusive_ptr<c10d::Store>& root, const JobPlace& place, int worldSize);
void publishWorldSize(c10d::Store& job, int worldSize);

// The job's keys as a member sees them (a PrefixStore under the token's prefix), once the host's record
// shows that this process holds the job's token. Waits up to place.timeout for the record; a token
// that does not match is a UsageError at once, not a timeout.
c10::intrusive_ptr<c10d::Store> admit(const c10::intrusive_ptr<c10d::Store>& root, const JobPlace& place);

// A process started for another world size than the job's is a UsageError naming both. When it is a
// rank (not a launcher checking ahead of its workers) the job is aborted too, so the peers waiting for
// their rendezvous fail at once with the same cause instead of timing out.
void checkWorldSize(c10d::Store& job, const JobPlace& place, int worldSize, std::optional<int> rank);

// Each rank joins once: a second process with the same rank (a worker started twice, or a second job on
// the same port) is a UsageError; the first one is left alone.
void claimRank(c10d::Store& job, const JobPlace& place, int rank);

// Throws the abort's cause as a UsageError if a rank aborted the job's rendezvous.
void throwIfAborted(c10d::Store& job);

}  // namespace balancenet::comm
