// The C entry points of libbalancenet_cuda.so, the one part of balancenet that links torch's CUDA libraries
// (libtorch_cuda, libc10_cuda) and NCCL's c10d group. balancenet itself links only libtorch_cpu, so a CPU job
// starts without loading CUDA; GpuSupport.cpp loads this plugin where a worker is given a GPU. Torch types cross
// by pointer: both sides are the same libtorch.
#pragma once
#include <cstddef>
#include <cstdint>

#include <c10/util/intrusive_ptr.h>

namespace c10d {
class Backend;
class Store;
}  // namespace c10d

extern "C" {
// A ProcessGroupNCCL of `size` ranks over `store`, bound to GPU `deviceIndex`. 0 and *out set, or non-zero with
// a one-line reason in `error` (`errorSize` bytes, terminated).
using BalancenetMakeNccl = int (*)(const c10::intrusive_ptr<c10d::Store>* store, int rank, int size, int64_t timeoutMs,
                                   int deviceIndex, c10::intrusive_ptr<c10d::Backend>* out, char* error,
                                   size_t errorSize);
// The GPU's name ("NVIDIA H200") into `name`.
using BalancenetGpuName = void (*)(int deviceIndex, char* name, size_t nameSize);
}

namespace balancenet::device::plugin {
constexpr const char* kMakeNccl = "balancenet_make_nccl";
constexpr const char* kGpuName = "balancenet_gpu_name";
constexpr const char* kFileName = "libbalancenet_cuda.so";
}  // namespace balancenet::device::plugin
