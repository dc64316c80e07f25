// ClosedJob: a job whose store other hosts can reach admits only the holders of its token, unless the user
// asked for an open job (--insecure-open-job).
#pragma once
#include <optional>
#include <string>

#include "balancenet/comm/Rendezvous.h"

namespace balancenet::comm {

// Why a process may not serve or reach the store of `o`, or nothing: a TCP store whose master address is not
// loopback (isLoopback) needs a job token unless o.insecureOpen. A file store and a loopback master never do.
std::optional<std::string> openJobRefusal(const RendezvousOptions& o);

// Throws openJobRefusal's reason as a UsageError.
void requireClosedJob(const RendezvousOptions& o);

// The store's host says so when its TCP store admits anyone who reaches `port` (no token).
void warnIfOpen(const RendezvousOptions& o, int port);

}  // namespace balancenet::comm
