// IntraOpThreads: one thread count for ATen's intra-op pool and for the BLAS library it calls.
#pragma once
#include <string>

namespace balancenet {

// at::set_num_threads(threads), and the same count for an optimised BLAS with a pool of its own:
// OpenBLAS' pthread build and BLIS start one thread per core whatever ATen says, so two workers with
// one thread each on two cores would otherwise run four busy threads. The reference BLAS has no threads.
// The BLAS is looked up at run time: the same binary runs with whichever libblas.so.3 the loader found.
void setIntraOpThreads(int threads);

// The file the loaded BLAS's sgemm_ comes from (".../openblas-pthread/libblas.so.3"), so that a
// measurement says which BLAS it was made with; "unknown" when the loader cannot tell.
std::string blasLibraryPath();

}  // namespace balancenet
