// MemoryReuse: keep the memory of freed tensors in the process instead of handing it back to the kernel.
#pragma once
#include <string>
#include <vector>

namespace balancenet {

// glibc's malloc serves blocks above a threshold with mmap and gives free memory at the top of the heap
// back to the kernel above a trim threshold. A training step allocates and frees tens of MB of
// activations and gradients, so by default each step hands them back and the next one faults them in
// again, page by page (7,000 page faults per step for cnn at 64 samples: 20% of a step on our 2 cores).
// This raises the mmap threshold to its maximum (32 MB) and the trim threshold to 1 GB, so freed blocks
// are reused. A user's own malloc settings (GLIBC_TUNABLES glibc.malloc.*, MALLOC_*_ variables) win:
// then nothing is changed and false is returned. Process-wide; call it once, early, in a worker.
bool keepFreedMemory();

// The MALLOC_*_ environment variables through which a user tunes glibc's malloc (besides GLIBC_TUNABLES).
const std::vector<std::string>& mallocEnvironmentVariables();

}  // namespace balancenet
