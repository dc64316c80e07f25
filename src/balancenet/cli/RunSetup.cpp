// Logging and run outputs, resolved the same way by train and federate.
#include "balancenet/cli/RunSetup.h"

#include <unistd.h>

#include <ctime>

#include <fmt/format.h>

#include "balancenet/core/Logging.h"

namespace balancenet::cli {
namespace {

std::string defaultRunDir() {
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return fmt::format("runs/{}-{}", stamp, ::getpid());
}

}  // namespace

// Logging, the progress period and the run directory, as every launcher and worker resolves them.
void settleLoggingAndOutputs(job::JobConfig& config, const RawFlags& raw) {
  setupLogging(config.logLevel);
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  config.trainer.progressSeconds =
      raw.progressSeconds >= 0 ? raw.progressSeconds : (tty ? kTerminalProgressSeconds : kLogProgressSeconds);
  if (config.trainer.runDir.empty()) config.trainer.runDir = defaultRunDir();
}

}  // namespace balancenet::cli
