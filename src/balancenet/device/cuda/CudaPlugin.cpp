// libbalancenet_cuda.so: built only where the torch is a CUDA build and the CUDA toolkit's headers are found
// (src/balancenet/device/CMakeLists.txt). Loaded at run time by GpuSupport.cpp; nothing links it.
#include "balancenet/device/cuda/CudaPlugin.h"

#include <ATen/cuda/CUDAContext.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include <chrono>
#include <cstring>
#include <string>

namespace {

void copyOut(const std::string& text, char* out, size_t size) {
  if (size == 0) return;
  const size_t n = std::min(size - 1, text.size());
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int balancenet_make_nccl(const c10::intrusive_ptr<c10d::Store>* store,
                                                                           int rank, int size, int64_t timeoutMs,
                                                                           int deviceIndex,
                                                                           c10::intrusive_ptr<c10d::Backend>* out,
                                                                           char* error, size_t errorSize) {
  try {
    auto options = c10d::ProcessGroupNCCL::Options::create();
    options->timeout = std::chrono::milliseconds(timeoutMs);
    auto group = c10::make_intrusive<c10d::ProcessGroupNCCL>(*store, rank, size, options);
    // Bound to its GPU: NCCL's communicator is made for that device, not for whichever the thread has current.
    group->setBoundDeviceId(at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(deviceIndex)));
    *out = group;
    return 0;
  } catch (const std::exception& e) {
    const std::string what = e.what();
    copyOut(what.substr(0, what.find('\n')), error, errorSize);
    return 1;
  }
}

extern "C" __attribute__((visibility("default"))) void balancenet_gpu_name(int deviceIndex, char* name,
                                                                           size_t nameSize) {
  try {
    copyOut(at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(deviceIndex))->name, name, nameSize);
  } catch (const std::exception&) {
    copyOut("a GPU", name, nameSize);
  }
}
