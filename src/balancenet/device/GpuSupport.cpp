#include "balancenet/device/GpuSupport.h"

#include <dlfcn.h>
#include <unistd.h>

#include <mutex>
#include <vector>

#include <ATen/DeviceAccelerator.h>
#include <fmt/format.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "balancenet/core/Error.h"
#include "balancenet/device/DeviceChoice.h"
#include "balancenet/device/cuda/CudaPlugin.h"

namespace balancenet::device {
namespace {

struct Loaded {
  bool done = false;
  std::string failure;                    // why the GPU support could not be loaded; empty: it was
  BalancenetMakeNccl makeNccl = nullptr;  // null: no plugin (GPUs without NCCL)
  BalancenetGpuName gpuName = nullptr;
};

std::mutex loadMutex;
Loaded loaded;

std::string directoryOf(const void* symbol) {
  Dl_info info{};
  if (dladdr(symbol, &info) == 0 || !info.dli_fname) return {};
  std::string path = info.dli_fname;
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::string executableDirectory() {
  std::vector<char> buffer(4096);
  const ssize_t n = ::readlink("/proc/self/exe", buffer.data(), buffer.size() - 1);
  if (n <= 0) return {};
  std::string path(buffer.data(), static_cast<size_t>(n));
  return path.substr(0, path.rfind('/'));
}

// Where the plugin may be: named by the environment (the tests do), beside the binary that holds this code (the
// Python extension) or the program, or in ../lib (the build tree's <build>/lib) or ../lib/balancenet (installed).
std::vector<std::string> pluginCandidates() {
  std::vector<std::string> out;
  if (const char* named = std::getenv("BALANCENET_CUDA_PLUGIN"); named && *named) out.emplace_back(named);
  for (const std::string& dir : {directoryOf(reinterpret_cast<const void*>(&gpuCount)), executableDirectory()}) {
    if (dir.empty()) continue;
    out.push_back(dir + "/" + plugin::kFileName);
    out.push_back(dir + "/../lib/" + plugin::kFileName);
    out.push_back(dir + "/../lib/balancenet/" + plugin::kFileName);
  }
  return out;
}

void loadOnce() {
  loaded.done = true;
  std::string tried;
  for (const auto& path : pluginCandidates()) {
    if (::access(path.c_str(), R_OK) != 0) continue;
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!handle) {
      tried = fmt::format("{}: {}", path, ::dlerror());
      continue;
    }
    loaded.makeNccl = reinterpret_cast<BalancenetMakeNccl>(::dlsym(handle, plugin::kMakeNccl));
    loaded.gpuName = reinterpret_cast<BalancenetGpuName>(::dlsym(handle, plugin::kGpuName));
    return;
  }
  // No plugin: torch's CUDA library alone, beside the libtorch_cpu this program runs on.
  const std::string torchCuda =
      directoryOf(reinterpret_cast<const void*>(&at::accelerator::deviceCount)) + "/libtorch_cuda.so";
  if (::dlopen(torchCuda.c_str(), RTLD_NOW | RTLD_GLOBAL)) return;
  loaded.failure = fmt::format("could not load torch's CUDA library ({}){}", ::dlerror(),
                               tried.empty() ? "" : fmt::format("; nor the plugin ({})", tried));
}

}  // namespace

bool gpuDriverPresent() {
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible && (!*visible || std::string(visible) == "-1"))
    return false;
  return ::access("/dev/nvidiactl", F_OK) == 0 || ::access("/proc/driver/nvidia/version", F_OK) == 0;
}

void loadGpuSupport() {
  std::lock_guard<std::mutex> lock(loadMutex);
  if (!loaded.done) loadOnce();
  if (!loaded.failure.empty()) throw RuntimeFailure(loaded.failure);
}

void loadGpuSupportWhereADriverIs() {
  if (!gpuDriverPresent()) return;
  try {
    loadGpuSupport();
  } catch (const RuntimeFailure&) {
    // Kept in `loaded.failure`: thrown again where a GPU is asked for.
  }
}

int gpuCount() {
  if (!gpuDriverPresent()) return 0;
  loadGpuSupport();
  const auto accelerator = at::accelerator::getAccelerator(false);
  if (!accelerator || *accelerator != c10::DeviceType::CUDA)
    throw InternalError(
        "torch settled that CUDA is absent before balancenet loaded its CUDA library: a torch call came before "
        "device::loadGpuSupport");
  try {
    return static_cast<int>(at::accelerator::deviceCount());
  } catch (const std::exception&) {
    return 0;  // a driver without a usable GPU (a mismatched driver, no device in this container)
  }
}

c10::Device prepareDevice(const DeviceOptions& options, int localRank) {
  const int gpus = mayUseGpu(options) ? gpuCount() : 0;
  const c10::Device device = deviceFor(options, localRank, gpus);
  if (device.is_cuda()) at::accelerator::setDeviceIndex(device.index());
  return device;
}

bool ncclAvailable() {
  std::lock_guard<std::mutex> lock(loadMutex);
  return loaded.makeNccl != nullptr;
}

c10::intrusive_ptr<c10d::Backend> makeNcclGroup(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                                std::chrono::milliseconds timeout, const c10::Device& device) {
  if (!ncclAvailable()) throw RuntimeFailure("NCCL is not available: this build has no libbalancenet_cuda.so");
  c10::intrusive_ptr<c10d::Backend> group;
  char error[512] = {0};
  if (loaded.makeNccl(&store, rank, size, timeout.count(), device.index(), &group, error, sizeof error) != 0)
    throw RuntimeFailure(fmt::format("rank {} could not form its NCCL group: {}", rank, error));
  return group;
}

std::string describeDevice(const c10::Device& device) {
  if (!device.is_cuda()) return deviceName(device);
  char name[256] = "a GPU";
  if (loaded.gpuName) loaded.gpuName(device.index(), name, sizeof name);
  double totalGiB = 0;
  try {
    totalGiB = static_cast<double>(at::accelerator::getMemoryInfo(device.index()).second) / (1ull << 30);
  } catch (const std::exception&) {
  }
  return fmt::format("{} ({}, {:.1f} GiB)", deviceName(device), name, totalGiB);
}

}  // namespace balancenet::device
