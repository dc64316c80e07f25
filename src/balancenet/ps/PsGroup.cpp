// The workers + servers group under its own prefix of the job's store.
#include "balancenet/ps/PsGroup.h"

#include "balancenet/comm/GroupPrefixes.h"
#include "balancenet/comm/Rendezvous.h"

namespace balancenet::ps {

std::unique_ptr<comm::Communicator> joinPsGroup(const c10::intrusive_ptr<c10d::Store>& jobStore, int rank, int workers,
                                                int servers, std::chrono::milliseconds timeout, const std::string& host,
                                                const std::string& iface) {
  return comm::joinGroupUnder(comm::kParameterServerGroupPrefix, jobStore, rank, workers + servers, timeout, host,
                              iface);
}

}  // namespace balancenet::ps
