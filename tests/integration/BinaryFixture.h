// BinaryFixture: runs the real balancenet binary on a small synthetic MNIST-format dataset.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "testing/ProcessRunner.h"
#include "testing/TempDir.h"

namespace balancenet::testing {

class BinaryFixture : public ::testing::Test {
 protected:
  void SetUp() override;
  // `balancenet train` with the synthetic data, a run dir in the temp dir, and the given flags.
  ProcessResult train(const std::vector<std::string>& flags, ProcessOptions options = {});
  ProcessResult run(const std::vector<std::string>& args, ProcessOptions options = {});

  TempDir dir_;
  std::string dataDir_;
};

// The balancenet command line of `train` on `dataDir` (unless `flags` name their own --data), writing to
// `runDir`, one thread per worker.
std::vector<std::string> trainCommand(const std::string& dataDir, const std::string& runDir,
                                      const std::vector<std::string>& flags);

// The parameters a run saved with --save-params.
std::vector<at::Tensor> loadSavedParameters(const std::string& path);

// A failure the way users must see it: exit code `exitCode`, no hang, exactly one line of the output
// starting "balancenet: error: " (worker lines forwarded by a launcher start "[rank r]", so they do
// not count), that line is the last non-empty line and contains `fragment`, and no C++ backtrace.
void expectOneLineError(const ProcessResult& r, const std::string& fragment, int exitCode);

}  // namespace balancenet::testing
