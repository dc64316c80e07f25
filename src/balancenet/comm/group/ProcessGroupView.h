// ProcessGroupView: a Communicator as torch.distributed sees it (a c10d ProcessGroup over its backends), for the
// Python package; nothing in the C++ engine goes through it.
#pragma once
#include <c10/util/intrusive_ptr.h>

namespace c10d {
class ProcessGroup;
}

namespace balancenet::comm {
class Communicator;

// CPU tensors on the group's Gloo; GPU tensors on its NCCL group where it has one, else on the same Gloo (which
// stages them through host memory).
c10::intrusive_ptr<c10d::ProcessGroup> processGroupOf(const Communicator& comm);

}  // namespace balancenet::comm
