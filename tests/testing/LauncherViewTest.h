// LauncherViewTest: tests of the train flags as a launcher parses them, with no worker identity inherited from
// the environment (run under torchrun or a launcher, RANK and friends would make the parse a worker's).
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>

#include "balancenet/core/EnvironmentVariables.h"

namespace balancenet::cli {

class LauncherViewTest : public ::testing::Test {
 protected:
  void SetUp() override { clearIdentity(); }
  static void clearIdentity() {
    for (const auto& v : environmentVariables())
      if (v.identity) ::unsetenv(v.name);
  }
};

}  // namespace balancenet::cli
