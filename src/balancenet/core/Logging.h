// Logging set-up: one place decides format and verbosity; modules just call spdlog.
#pragma once
#include <string>

namespace balancenet {

// Messages go to stderr as "[level] text"; the launcher adds the rank prefix when it forwards them.
void setupLogging(const std::string& level);  // trace|debug|info|warn|error; throws UsageError otherwise

// libtorch 2.x's c10d logs its own warnings and errors to stderr, many with a C++ backtrace (a store connection
// that closed, a socket that timed out); balancenet reports each failure as one line of its own. Keeps c10's log
// to fatal messages, in this process and the workers it starts, unless TORCH_CPP_LOG_LEVEL says otherwise.
void quietTorchLogging();
// The sink is thread-safe: the monitor and elastic threads log while the training thread does.

}  // namespace balancenet
