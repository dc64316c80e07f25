// GroupPrefixes: the key prefix of every Gloo group a job forms in its store, in one place, so that no two
// groups ever meet under the same keys; and the store seen under one of them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <c10/util/intrusive_ptr.h>

namespace c10d {
class Store;
}

namespace balancenet::comm {

// Under the job's admitted store (JobAdmission.h): the workers' group, formed by rendezvous(). Every prefix
// below is under this one, in the store that connectJobStore() and Communicator::sharedStore() return.
constexpr const char* kJobGroupPrefix = "pg";
// The job's keys on its `attempt`-th restart as a whole (0: the job as launched, no prefix): "attempt/<n>".
std::string attemptPrefix(int attempt);
// NodeMonitor's side group of the workers (sideGroup), its probes apart from the training collectives.
constexpr const char* kProbeGroupPrefix = "probe";
// A group's own Gloo mesh (GlooMesh.h), under the group's store: at most one per group.
constexpr const char* kMeshPrefix = "mesh";
// The NCCL group that sums a group's GPU tensors (group/GpuGroup.h).
constexpr const char* kNcclPrefix = "nccl";
// The workers and the parameter servers (ps/PsGroup.h).
constexpr const char* kParameterServerGroupPrefix = "ps";
// The server (rank 0) and one client of `balancenet federate`, a fresh group per connection:
// "fed/<client>/<generation>".
std::string federatedChannelPrefix(int client, int64_t generation);
// The workers of elastic generation `number` (elastic/ElasticAgent.h): "elastic/g<number>/pg", beside the
// generation's membership keys.
std::string elasticGenerationPrefix(int number);
// A subgroup of a communicator's ranks (Communicator::subgroup), under that communicator's store: "sub/<r>,<r>,...".
std::string subgroupPrefix(const std::vector<int>& members);

// `store` with `prefix` and '/' before every key (c10d's PrefixStore).
c10::intrusive_ptr<c10d::Store> scopedStore(const std::string& prefix, c10::intrusive_ptr<c10d::Store> store);

}  // namespace balancenet::comm
