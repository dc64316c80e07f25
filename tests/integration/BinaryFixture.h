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

// The parameters a run saved with --save-params.
std::vector<at::Tensor> loadSavedParameters(const std::string& path);

// The output must end in exactly one "balancenet: error: ..." line containing `fragment`.
void expectOneLineError(const ProcessResult& r, const std::string& fragment, int exitCode);

}  // namespace balancenet::testing
