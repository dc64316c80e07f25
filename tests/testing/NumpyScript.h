// NumpyScript: writes a test's data files with Debian's numpy (/usr/bin/python3), the writer users have.
#pragma once
#include <cstdlib>
#include <string>
#include <vector>

#include "testing/ProcessRunner.h"

namespace balancenet::testing {

// Whether /usr/bin/python3 can import numpy (python3-numpy); tests skip, visibly, when it cannot.
inline bool numpyAvailable() { return std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0; }
// Whether /usr/bin/python3 can import torch (python3-torch, the reference of several tests).
inline bool pythonTorchInstalled() { return std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0; }

// Runs `script` with `np` (numpy) and `sys` imported, `d` the directory to write into and `args` in
// sys.argv[2:]. Returns "" on success, else the exit code and output, for ASSERT_EQ(runNumpy(...), "").
inline std::string runNumpy(const std::string& dir, const std::string& script, std::vector<std::string> args = {}) {
  std::vector<std::string> argv{"/usr/bin/python3", "-c", "import sys\nimport numpy as np\nd = sys.argv[1]\n" + script,
                                dir};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = runProcess(argv);
  if (r.exitCode == 0) return "";
  return "python exited " + std::to_string(r.exitCode) + ": " + r.output;
}

}  // namespace balancenet::testing

#define REQUIRE_NUMPY() \
  if (!::balancenet::testing::numpyAvailable()) GTEST_SKIP() << "/usr/bin/python3 has no numpy (python3-numpy)"
