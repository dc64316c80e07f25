// spdlog configuration shared by the launcher and the workers.
#include "balancenet/core/Logging.h"

#include <c10/util/Logging.h>
#include <cstdlib>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "balancenet/core/Error.h"

namespace balancenet {

std::string firstLine(const std::string& message) {
  auto end = message.find('\n');
  return end == std::string::npos ? message : message.substr(0, end);
}

void setupLogging(const std::string& level) {
  auto parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off")
    throw UsageError("--log-level must be one of trace, debug, info, warn, error, off; got '" + level + "'");
  auto logger = std::make_shared<spdlog::logger>("balancenet", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("[%l] %v");
  spdlog::set_level(parsed);
}

void quietTorchLogging() {
  ::setenv("TORCH_CPP_LOG_LEVEL", "FATAL", /*overwrite=*/0);  // inherited by the workers this process starts
  c10::initLogging();                                         // reads it now, for this process
}

}  // namespace balancenet
