// NumpyScript: writes a test's data files with numpy (the project's Python, BALANCENET_PYTHON_EXE), the writer
// users have.
#pragma once
#include <cstdlib>
#include <string>
#include <vector>

#include "testing/ProcessRunner.h"

namespace balancenet::testing {

// Whether the project's Python can import numpy / torch (scripts/setup.sh installs both into .venv/): a test
// that needs them fails when they are missing, never skips.
inline bool numpyAvailable() {
  return std::system((std::string(BALANCENET_PYTHON_EXE) + " -c 'import numpy' >/dev/null 2>&1").c_str()) == 0;
}
// Found, not imported: importing torch 2.x costs seconds of CPU, and the test's own scripts import it anyway.
inline bool pythonTorchInstalled() {
  return std::system((std::string(BALANCENET_PYTHON_EXE) +
                      " -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec(\"torch\") is None)'"
                      " >/dev/null 2>&1")
                         .c_str()) == 0;
}

// Runs `script` with `np` (numpy) and `sys` imported, `d` the directory to write into and `args` in
// sys.argv[2:]. Returns "" on success, else the exit code and output, for ASSERT_EQ(runNumpy(...), "").
inline std::string runNumpy(const std::string& dir, const std::string& script, std::vector<std::string> args = {}) {
  std::vector<std::string> argv{BALANCENET_PYTHON_EXE, "-c",
                                "import sys\nimport numpy as np\nd = sys.argv[1]\n" + script, dir};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = runProcess(argv);
  if (r.exitCode == 0) return "";
  return "python exited " + std::to_string(r.exitCode) + ": " + r.output;
}

}  // namespace balancenet::testing

#define REQUIRE_NUMPY() \
  ASSERT_TRUE(::balancenet::testing::numpyAvailable()) << BALANCENET_PYTHON_EXE << " has no numpy (scripts/setup.sh)"
