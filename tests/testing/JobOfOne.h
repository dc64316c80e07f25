// A job of one process that writes its run's files to a folder and prints no progress: what a Session test starts
// from.
#pragma once
#include <string>

#include "balancenet/job/JobConfig.h"

namespace balancenet::testing {

inline job::JobConfig jobOfOneIn(const std::string& runDir) {
  job::JobConfig c;
  c.trainer.runDir = runDir;
  c.trainer.progressSeconds = 0;
  return c;
}

}  // namespace balancenet::testing
