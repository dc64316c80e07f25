#include "balancenet/device/GroupBackend.h"

#include <map>
#include <utility>

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::device {
namespace {

// Why NCCL cannot sum this group; empty: it can.
std::string whyNotNccl(const std::vector<RankDevice>& ranks, bool ncclBuilt) {
  if (!ncclBuilt) return "this build has no NCCL (it was built without the CUDA toolkit or a CUDA torch)";
  std::map<std::pair<std::string, std::string>, size_t> firstOn;
  for (size_t r = 0; r < ranks.size(); ++r) {
    if (ranks[r].device.rfind("cuda", 0) != 0) return fmt::format("rank {} computes on the {}", r, ranks[r].device);
    const auto [it, fresh] = firstOn.emplace(std::make_pair(ranks[r].host, ranks[r].device), r);
    if (!fresh)
      return fmt::format("ranks {} and {} share {} on {} (NCCL takes one rank per GPU)", it->second, r, ranks[r].device,
                         ranks[r].host);
  }
  return {};
}

}  // namespace

GroupBackend chooseGroupBackend(const std::string& asked, const std::vector<RankDevice>& ranks, bool ncclBuilt) {
  if (asked == "gloo") return GroupBackend::Gloo;
  bool anyGpu = false;
  for (const auto& r : ranks) anyGpu = anyGpu || r.device.rfind("cuda", 0) == 0;
  const std::string why = whyNotNccl(ranks, ncclBuilt);
  if (asked == "nccl" && !why.empty()) throw RuntimeFailure("--backend nccl cannot sum this group: " + why);
  return anyGpu && why.empty() ? GroupBackend::Nccl : GroupBackend::Gloo;
}

const char* groupBackendName(GroupBackend backend) { return backend == GroupBackend::Nccl ? "nccl" : "gloo"; }

}  // namespace balancenet::device
