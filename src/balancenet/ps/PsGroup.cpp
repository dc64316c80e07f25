// The workers + servers group under the "ps" prefix of the job's store.
#include "balancenet/ps/PsGroup.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include "balancenet/comm/Rendezvous.h"

namespace balancenet::ps {

std::unique_ptr<comm::Communicator> joinPsGroup(const c10::intrusive_ptr<c10d::Store>& jobStore, int rank, int workers,
                                                int servers, std::chrono::milliseconds timeout, const std::string& host,
                                                const std::string& iface) {
  auto scoped = c10::make_intrusive<c10d::PrefixStore>("ps", jobStore);
  return comm::joinGroup(scoped, rank, workers + servers, timeout, host, iface);
}

}  // namespace balancenet::ps
