// IntraOpThreads: the BLAS's own thread-count setters are found with dlsym, not linked: PyPI's torch carries MKL
// inside libtorch_cpu (at::set_num_threads sets its count), a torch built on OpenBLAS or BLIS loads those.
#include "balancenet/core/IntraOpThreads.h"

#include <dlfcn.h>

#include <ATen/Parallel.h>

namespace balancenet {

void setIntraOpThreads(int threads) {
  at::set_num_threads(threads);
  using SetThreads = void (*)(int);
  // OpenBLAS (both its pthread and OpenMP builds) and BLIS; absent from the reference BLAS.
  for (const char* name : {"openblas_set_num_threads", "bli_thread_set_num_threads"})
    if (void* f = dlsym(RTLD_DEFAULT, name)) reinterpret_cast<SetThreads>(f)(threads);
}

std::string blasLibraryPath() {
  Dl_info info{};
  void* sgemm = dlsym(RTLD_DEFAULT, "sgemm_");
  if (!sgemm || !dladdr(sgemm, &info) || !info.dli_fname) return "unknown";
  const bool mkl = dlsym(RTLD_DEFAULT, "mkl_get_max_threads") != nullptr;
  return mkl ? std::string("MKL in ") + info.dli_fname : info.dli_fname;
}

}  // namespace balancenet
