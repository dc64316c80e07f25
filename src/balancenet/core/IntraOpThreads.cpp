// IntraOpThreads: the BLAS's own thread-count setters are found with dlsym, not linked, because
// libtorch links whichever libblas.so.3 the system (or balancenet's RPATH) provides.
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
  return info.dli_fname;
}

}  // namespace balancenet
