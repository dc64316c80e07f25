// IntraOpThreads: one thread count for ATen's intra-op pool and for the BLAS library it calls.
#pragma once
#include <string>

namespace balancenet {

// at::set_num_threads(threads) (ATen's OpenMP pool and, in PyPI's torch, MKL's), and the same count for a BLAS
// with a pool of its own: OpenBLAS' pthread build and BLIS start one thread per core whatever ATen says, so two
// workers with one thread each on two cores would otherwise run four busy threads. Looked up at run time.
void setIntraOpThreads(int threads);

// The file the loaded BLAS's sgemm_ comes from ("MKL in .../torch/lib/libtorch_cpu.so"), so that a
// measurement says which BLAS it was made with; "unknown" when the loader cannot tell.
std::string blasLibraryPath();

}  // namespace balancenet
