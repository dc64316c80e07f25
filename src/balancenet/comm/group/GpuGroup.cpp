#include "balancenet/comm/group/GpuGroup.h"

#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>

#include "balancenet/comm/GroupPrefixes.h"
#include "balancenet/device/DeviceChoice.h"
#include "balancenet/device/GpuSupport.h"

namespace balancenet::comm {
namespace {

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

device::GroupBackend attachGpuGroup(Communicator& comm, const c10::Device& device, const device::DeviceOptions& options,
                                    std::chrono::milliseconds timeout) {
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  // One line per rank: host, device, whether its build loaded NCCL (a CPU rank never loads it: only all-GPU
  // groups ask).
  const std::string mine = fmt::format("{}\n{}\n{}", host, device::deviceName(device), device::ncclAvailable());
  std::vector<device::RankDevice> ranks;
  bool ncclEverywhere = true;
  bool anyGpu = false;
  for (const auto& text : comm.allgatherText(mine)) {
    const auto fields = linesOf(text);
    ranks.push_back({fields.at(0), fields.at(1)});
    ncclEverywhere = ncclEverywhere && fields.at(2) == "true";
    anyGpu = anyGpu || fields.at(1) != "cpu";
  }
  const auto backend = device::chooseGroupBackend(options.backend, ranks, ncclEverywhere);
  if (backend == device::GroupBackend::Nccl)
    comm.attachGpuGroup(
        device::makeNcclGroup(scopedStore(kNcclPrefix, comm.sharedStore()), comm.rank(), comm.size(), timeout, device));
  if (comm.rank() == 0 && anyGpu)
    spdlog::info("GPU gradients sum by {} over {} workers", device::groupBackendName(backend), comm.size());
  return backend;
}

}  // namespace balancenet::comm
