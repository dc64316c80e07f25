// The defaults every command starts from, and the outputs every launcher settles.
#include "balancenet/job/JobDefaults.h"

#include <unistd.h>

#include <ctime>

#include <fmt/format.h>

#include "balancenet/core/Logging.h"
#include "balancenet/data/DataOptions.h"

namespace balancenet::job {
namespace {

std::string defaultRunDir() {
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return fmt::format("runs/{}-{}", stamp, ::getpid());
}

}  // namespace

JobConfig defaultJobConfig() {
  JobConfig config;
  config.model.name = "cnn";
  config.data.cacheDir = data::defaultCacheDir();
  config.trainer.lr.baseLr = 0.05;
  return config;
}

JobConfig defaultLaunchConfig() {
  JobConfig config = defaultJobConfig();
  config.trainer.globalBatch = 0;
  return config;
}

void settleLoggingAndOutputs(JobConfig& c, double progressSeconds) {
  setupLogging(c.logLevel);
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  c.trainer.progressSeconds =
      progressSeconds >= 0 ? progressSeconds : (tty ? kTerminalProgressSeconds : kLogProgressSeconds);
  if (c.trainer.runDir.empty()) c.trainer.runDir = defaultRunDir();
}

}  // namespace balancenet::job
