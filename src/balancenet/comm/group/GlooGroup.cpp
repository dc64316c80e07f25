// The one file that includes ProcessGroupGloo.hpp. torch's wheel exports Gloo's symbols but ships none of its
// headers; this header's Gloo types come from Debian's libgloo-dev (declarations only: only pointers to them
// cross into libtorch, and nothing links Debian's libgloo: the Gloo in the process is libtorch's own).
#include "balancenet/comm/group/GlooGroup.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <cstdlib>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/FatalError.h"

namespace balancenet::comm {

bool isLoopback(const std::string& host) { return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1"; }

std::unique_ptr<Communicator> joinGroup(const c10::intrusive_ptr<c10d::Store>& store, int rank, int worldSize,
                                        std::chrono::milliseconds timeout, const std::string& host,
                                        const std::string& iface, int threads) {
  // c10d 2.x records every collective in one process-wide flight recorder, which raced (a segfault in its map,
  // 2 runs in 10 of the thread-rank pipeline tests) when several groups of one process run collectives at once,
  // as a worker's job group, side groups and mesh do. balancenet names failures itself: no recorder, unless the
  // user asks for one (read once, at the first collective of the process).
  ::setenv("TORCH_FR_BUFFER_SIZE", "0", /*overwrite=*/0);
  // A peer's group torn down first closes the sockets this one still writes to (once in a suite: unit_monitor's
  // thread ranks killed by SIGPIPE).
  ignoreBrokenPipes();
  auto opts = c10d::ProcessGroupGloo::Options::create(timeout);
  try {
    if (!iface.empty())
      opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(iface));
    else if (isLoopback(host))
      opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    else
      opts->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    opts->threads = threads;
    // Subgroups and the mesh share this group's devices (as c10d's new_group does) and timeout.
    GroupMaker makeGroup = [opts](const c10::intrusive_ptr<c10d::Store>& s, int r, int n) {
      return c10::intrusive_ptr<c10d::Backend>(c10::make_intrusive<c10d::ProcessGroupGloo>(s, r, n, opts));
    };
    auto group = makeGroup(store, rank, worldSize);
    return std::make_unique<Communicator>(store, group, std::move(makeGroup));
  } catch (const std::exception& e) {
    throw RuntimeFailure(fmt::format("rank {} could not connect to its peers: {}", rank, firstLine(e.what())));
  }
}

}  // namespace balancenet::comm
