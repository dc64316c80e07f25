// GPU workers as real processes (ctest label `gpu`): `balancenet train` on GPUs, alone or beside CPU workers, ends
// with the parameters of one process on the same global batches; device mistakes on a GPU machine are one line.
// Where this machine has no GPU driver every case skips, saying so (ctest reports the test skipped).
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "BinaryFixture.h"
#include "balancenet/device/GpuSupport.h"
#include "testing/FloatBound.h"
#include "testing/ReferenceTraining.h"

namespace balancenet::testing {
namespace {

class GpuProcess : public BinaryFixture {
 protected:
  void SetUp() override {
    // The driver's device nodes, not CUDA itself: this process need not load CUDA to ask.
    if (!device::gpuDriverPresent()) GTEST_SKIP() << "no GPU driver here: runs on a GPU machine (scripts/gpu-check.sh)";
    BinaryFixture::SetUp();
  }

  // `flags` (multi-worker) against `single` (one worker), both with the same model, batches and steps; the mlp:
  // cuBLAS's float32 matrix products (no TF32 unless asked), so the bound is float32's (testing/FloatBound.h).
  void expectSameAsOneProcess(const std::vector<std::string>& flags, const std::vector<std::string>& single) {
    const std::vector<std::string> common{"--model", "mlp",  "--global-batch", "32",         "--steps",
                                          "6",       "--lr", "0.05",           "--momentum", "0.9"};
    auto multi = common;
    multi.insert(multi.end(), flags.begin(), flags.end());
    multi.insert(multi.end(), {"--save-params", dir_.file("multi.pt")});
    auto one = common;
    one.insert(one.end(), single.begin(), single.end());
    one.insert(one.end(), {"--nodes", "1", "--save-params", dir_.file("one.pt"), "--run-dir", dir_.file("run1")});
    const auto r = train(multi);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const auto r1 = train(one);
    ASSERT_EQ(r1.exitCode, 0) << r1.output;
    const auto reference = loadSavedParameters(dir_.file("one.pt"));
    const double diff = maxAbsDifference(loadSavedParameters(dir_.file("multi.pt")), reference);
    const double bound = exactnessBound(reference, 6);
    std::printf("max |param difference| vs one process = %.3g (float bound %.3g)\n", diff, bound);
    EXPECT_LT(diff, bound);
  }
};

TEST_F(GpuProcess, TwoWorkersSharingAGpuMatchOneProcess) {
  expectSameAsOneProcess({"--device", "cuda", "--nodes", "2", "--split", "24,8"}, {"--device", "cuda"});
}

TEST_F(GpuProcess, OneGpuWorkerBesideCpuWorkersMatchesOneProcess) {
  expectSameAsOneProcess({"--devices", "cuda:0,cpu,cpu", "--nodes", "3", "--split", "20,6,6"}, {"--device", "cpu"});
  const auto summary = nlohmann::json::parse(readFile(dir_.file("run/summary.json")));
  EXPECT_EQ(summary["devices"], nlohmann::json::array({"cuda:0", "cpu", "cpu"}));
}

TEST_F(GpuProcess, AGpuIndexBeyondTheHostsIsOneLine) {
  expectOneLineError(train({"--devices", "cuda:63", "--steps", "1"}), "asks for cuda:63, and this host has", 2);
}

TEST_F(GpuProcess, NcclForWorkersSharingAGpuIsOneLine) {
  ProcessOptions one;
  one.env["CUDA_VISIBLE_DEVICES"] = "0";  // one GPU, two workers
  expectOneLineError(train({"--device", "cuda", "--nodes", "2", "--backend", "nccl", "--steps", "1"}, one),
                     "share cuda:0", 1);
}

}  // namespace
}  // namespace balancenet::testing
