// StallReport: the one line a rank prints when a collective failed or waited too long: which ranks
// are missing, where, and at which step ("step 57: rank 2 at 10.0.0.3 has not contributed for 30.0 s (last at
// step 56)"; a job on one machine leaves out the address).
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace c10d {
class Store;
}

namespace balancenet::elastic {

// A member is missing once its heartbeat is this old (beats come every 200 ms).
constexpr std::chrono::milliseconds kStaleAfter{2000};

// Members whose heartbeat is older than kStaleAfter (or absent), among `members`.
std::vector<int> staleMembers(c10d::Store& store, const std::vector<int>& members);

// `members[r]` is the member id of rank r (the rank the launcher named the worker by); `step` is the
// step this rank is in. Waits up to kStaleAfter + 1 s for a dead peer's heartbeat to age, then names
// the stale members; if none is stale, those behind `step`; if none (every peer alive and
// on time: not a stall), the failure itself.
std::string describeMissing(c10d::Store& store, const std::vector<int>& members, int self, int64_t step,
                            const std::string& failure);

}  // namespace balancenet::elastic
