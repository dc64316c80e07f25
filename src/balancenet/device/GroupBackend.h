// GroupBackend: which engine sums a group's GPU gradients. NCCL sums on the GPUs themselves but takes only GPU
// tensors and one rank per GPU; Gloo takes both kinds (c10d's Gloo copies a GPU tensor through pinned host memory
// on its own stream), so a group that mixes GPU and CPU workers, or shares a GPU, sums by Gloo.
#pragma once
#include <string>
#include <vector>

namespace balancenet::device {

enum class GroupBackend { Gloo, Nccl };

// Where one rank of the group computes: its host and its device's name ("cpu", "cuda:0").
struct RankDevice {
  std::string host;
  std::string device;
};

// The engine for `ranks` (in rank order) under --backend `asked` (auto|gloo|nccl); `ncclBuilt`: this build can
// make NCCL groups. auto: NCCL where every rank has a GPU of its own and NCCL is built, else Gloo. nccl where it
// cannot run throws RuntimeFailure naming why (a rank on the CPU, two ranks on one GPU, a build without NCCL).
GroupBackend chooseGroupBackend(const std::string& asked, const std::vector<RankDevice>& ranks, bool ncclBuilt);

const char* groupBackendName(GroupBackend backend);

}  // namespace balancenet::device
