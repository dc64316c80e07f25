// The ProcessGroup over a Communicator's backends; Gloo is the default backend.
#include "balancenet/comm/group/ProcessGroupView.h"

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include "balancenet/comm/group/Communicator.h"

namespace balancenet::comm {

c10::intrusive_ptr<c10d::ProcessGroup> processGroupOf(const Communicator& comm) {
  auto group = c10::make_intrusive<c10d::ProcessGroup>(comm.sharedStore(), comm.rank(), comm.size());
  group->setBackend(c10::DeviceType::CPU, c10d::ProcessGroup::BackendType::GLOO, comm.backend());
  if (comm.gpuBackend())
    group->setBackend(c10::DeviceType::CUDA, c10d::ProcessGroup::BackendType::NCCL, comm.gpuBackend());
  else
    group->setBackend(c10::DeviceType::CUDA, c10d::ProcessGroup::BackendType::GLOO, comm.backend());
  group->setDefaultBackend(c10d::ProcessGroup::BackendType::GLOO);
  return group;
}

}  // namespace balancenet::comm
