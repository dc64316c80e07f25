// Which device each worker gets, and the flags' one-line refusals: pure rules, checked without a GPU.
#include <gtest/gtest.h>

#include "balancenet/core/Error.h"
#include "balancenet/device/DeviceChoice.h"

namespace balancenet::device {
namespace {

DeviceOptions withDevice(const std::string& device) {
  DeviceOptions o;
  o.device = device;
  return o;
}

DeviceOptions withDevices(std::vector<std::string> devices, const std::string& backend = "auto") {
  DeviceOptions o;
  o.devices = std::move(devices);
  o.backend = backend;
  return o;
}

std::string usageErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no UsageError)";
}

TEST(DeviceChoice, AutoTakesTheLocalRanksGpuInTurnOrTheCpu) {
  EXPECT_EQ(deviceFor(withDevice("auto"), 0, 0), c10::Device(c10::DeviceType::CPU));
  EXPECT_EQ(deviceFor(withDevice("auto"), 3, 0), c10::Device(c10::DeviceType::CPU));
  EXPECT_EQ(deviceFor(withDevice("auto"), 0, 2), c10::Device("cuda:0"));
  EXPECT_EQ(deviceFor(withDevice("auto"), 1, 2), c10::Device("cuda:1"));
  EXPECT_EQ(deviceFor(withDevice("auto"), 2, 2), c10::Device("cuda:0"));  // more workers than GPUs: they share
  EXPECT_EQ(deviceFor(withDevice("cuda"), 5, 4), c10::Device("cuda:1"));
  EXPECT_EQ(deviceFor(withDevice("cpu"), 0, 8), c10::Device(c10::DeviceType::CPU));
  EXPECT_EQ(deviceFor(withDevice("cuda:1"), 0, 2), c10::Device("cuda:1"));  // every worker of the host on GPU 1
  EXPECT_EQ(deviceFor(withDevice("cuda:1"), 3, 2), c10::Device("cuda:1"));
}

TEST(DeviceChoice, DevicesNameEachLocalWorker) {
  const auto o = withDevices({"cuda:1", "cpu", "cuda"});
  EXPECT_EQ(deviceFor(o, 0, 2), c10::Device("cuda:1"));
  EXPECT_EQ(deviceFor(o, 1, 2), c10::Device(c10::DeviceType::CPU));
  EXPECT_EQ(deviceFor(o, 2, 2), c10::Device("cuda:0"));  // "cuda": the local rank's in turn
  EXPECT_EQ(deviceFor(withDevices({"cpu", "cpu"}), 1, 0), c10::Device(c10::DeviceType::CPU));
}

TEST(DeviceChoice, AGpuAskedWhereThereIsNoneOrNotThatOneIsOneLine) {
  EXPECT_NE(
      usageErrorOf([] { deviceFor(withDevice("cuda"), 0, 0); }).find("--device asks for a GPU, and this host has none"),
      std::string::npos);
  EXPECT_NE(usageErrorOf([] {
              deviceFor(withDevices({"cpu", "cuda:2"}), 1, 2);
            }).find("--devices (worker 1) asks for cuda:2, and this host has 2 GPUs (cuda:0 to cuda:1)"),
            std::string::npos);
  EXPECT_NE(usageErrorOf([] { deviceFor(withDevices({"cuda:0"}), 0, 0); }).find("has none"), std::string::npos);
}

TEST(DeviceChoice, FlagsAreCheckedBeforeAnyGpuIsCounted) {
  EXPECT_NO_THROW(checkDeviceOptions(withDevice("auto"), 4));
  EXPECT_NO_THROW(checkDeviceOptions(withDevices({"cuda:0", "cpu"}), 2));
  EXPECT_NO_THROW(checkDeviceOptions(withDevices({"cuda:0", "cpu"}), 0));  // a scheduler's worker: count unknown
  EXPECT_NE(usageErrorOf([] {
              checkDeviceOptions(withDevice("gpu"), 1);
            }).find("--device 'gpu': expected auto, cpu, cuda or cuda:N"),
            std::string::npos);
  EXPECT_NE(usageErrorOf([] {
              checkDeviceOptions(withDevices({"cuda:0", "cpu", "cpu"}), 2);
            }).find("--devices names 3 devices for 2 workers on this host"),
            std::string::npos);
  for (const char* bad : {"cuda:", "cuda:-1", "cuda:x", "CUDA", "cuda0", "mps"})
    EXPECT_NE(usageErrorOf([&] { checkDeviceOptions(withDevices({bad}), 1); }).find("expected cpu, cuda or cuda:N"),
              std::string::npos)
        << bad;
  DeviceOptions badBackend;
  badBackend.backend = "mpi";
  EXPECT_NE(usageErrorOf([&] { checkDeviceOptions(badBackend, 1); }).find("--backend 'mpi'"), std::string::npos);
}

TEST(DeviceChoice, NcclAskedForCpuWorkersIsRefused) {
  EXPECT_NE(usageErrorOf([] {
              checkDeviceOptions(withDevices({"cuda:0", "cpu"}, "nccl"), 2);
            }).find("--backend nccl needs every worker on a GPU; --devices puts worker 1 on the CPU"),
            std::string::npos);
  DeviceOptions cpu = withDevice("cpu");
  cpu.backend = "nccl";
  EXPECT_NE(usageErrorOf([&] { checkDeviceOptions(cpu, 1); }).find("--device cpu"), std::string::npos);
  EXPECT_NO_THROW(checkDeviceOptions(withDevices({"cuda:0", "cuda:1"}, "nccl"), 2));
  EXPECT_NE(usageErrorOf([] {
              checkDeviceOptions(withDevices({"cuda:1", "cuda:0", "cuda:1"}, "nccl"), 3);
            }).find("--backend nccl takes one worker per GPU, and --devices puts workers 0 and 2 on cuda:1"),
            std::string::npos);
  DeviceOptions oneGpu = withDevice("cuda:0");
  oneGpu.backend = "nccl";
  EXPECT_NE(usageErrorOf([&] { checkDeviceOptions(oneGpu, 2); }).find("--device cuda:0 puts 2 workers on it"),
            std::string::npos);
  EXPECT_NO_THROW(checkDeviceOptions(oneGpu, 1));
}

TEST(DeviceChoice, OnlyANamedGpuMakesOneNecessary) {
  EXPECT_TRUE(mayUseGpu(withDevice("auto")));
  EXPECT_FALSE(needsGpu(withDevice("auto")));
  EXPECT_TRUE(needsGpu(withDevice("cuda")));
  EXPECT_TRUE(needsGpu(withDevice("cuda:0")));
  EXPECT_FALSE(mayUseGpu(withDevice("cpu")));
  EXPECT_TRUE(needsGpu(withDevices({"cpu", "cuda"})));
  EXPECT_FALSE(mayUseGpu(withDevices({"cpu", "cpu"})));
}

}  // namespace
}  // namespace balancenet::device
