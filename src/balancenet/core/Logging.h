// Logging set-up: one place decides format and verbosity; modules just call spdlog.
#pragma once
#include <string>

namespace balancenet {

// Messages go to stderr as "[level] text"; the launcher adds the rank prefix when it forwards them.
void setupLogging(const std::string& level);  // trace|debug|info|warn|error; throws UsageError otherwise
// The sink is thread-safe: the monitor and elastic threads log while the training thread does.

}  // namespace balancenet
