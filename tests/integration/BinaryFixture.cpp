// Shared set-up for the tests that run the binary end to end.
#include "BinaryFixture.h"

#include <torch/serialize.h>

#include <algorithm>
#include <filesystem>

#include "testing/SyntheticData.h"

namespace balancenet::testing {

void BinaryFixture::SetUp() {
  dataDir_ = dir_.file("data");
  std::filesystem::create_directories(dataDir_);
  writeSyntheticMnistDir(dataDir_, 512, 128);
}

ProcessResult BinaryFixture::run(const std::vector<std::string>& args, ProcessOptions options) {
  std::vector<std::string> argv{BALANCENET_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return runProcess(argv, options);
}

std::vector<std::string> trainCommand(const std::string& dataDir, const std::string& runDir,
                                      const std::vector<std::string>& flags) {
  std::vector<std::string> argv{BALANCENET_BINARY, "train", "--run-dir", runDir, "--threads", "1"};
  // Flags naming their own --data replace the synthetic IDX directory (the two flags exclude each other).
  if (std::find(flags.begin(), flags.end(), "--data") == flags.end()) argv.insert(argv.end(), {"--data-dir", dataDir});
  argv.insert(argv.end(), flags.begin(), flags.end());
  return argv;
}

ProcessResult BinaryFixture::train(const std::vector<std::string>& flags, ProcessOptions options) {
  return runProcess(trainCommand(dataDir_, dir_.file("run"), flags), options);
}

std::vector<at::Tensor> loadSavedParameters(const std::string& path) {
  std::vector<at::Tensor> params;
  torch::load(params, path);
  return params;
}

void expectOneLineError(const ProcessResult& r, const std::string& fragment, int exitCode) {
  EXPECT_FALSE(r.timedOut) << "hung: " << r.output;
  EXPECT_EQ(r.exitCode, exitCode) << r.output;
  int errorLines = 0;
  std::string errorLine;
  size_t pos = 0;
  while ((pos = r.output.find("balancenet: error: ", pos)) != std::string::npos) {
    if (pos == 0 || r.output[pos - 1] == '\n') {
      ++errorLines;
      errorLine = r.output.substr(pos, r.output.find('\n', pos) - pos);
    }
    ++pos;
  }
  EXPECT_EQ(errorLines, 1) << r.output;
  const auto end = r.output.find_last_not_of('\n');
  const auto start = end == std::string::npos ? end : r.output.rfind('\n', end);
  const std::string lastLine =
      end == std::string::npos ? "" : r.output.substr(start == std::string::npos ? 0 : start + 1, end - start);
  EXPECT_EQ(lastLine.rfind("balancenet: error: ", 0), 0u) << "the error is not the last line:\n" << r.output;
  EXPECT_NE(errorLine.find(fragment), std::string::npos) << "error line: " << errorLine << "\nall output:\n"
                                                         << r.output;
  EXPECT_EQ(r.output.find("frame #"), std::string::npos) << "a C++ backtrace leaked:\n" << r.output;
}

}  // namespace balancenet::testing
