// GemmProbe: a short float32 matrix-multiply benchmark, the prior for a node's ops/s before any step.
#pragma once

namespace balancenet::metrics {

// Times at::mm on 256x256 float32 matrices with the current intra-op thread count (at::get_num_threads),
// after a warm-up, repeating until `seconds` have elapsed. Returns FLOP/s, counting 2*n^3 per product.
// Blocks the calling thread for about `seconds` and uses the intra-op pool while it runs. Draws nothing
// from the global random generator.
double measureGemmFlops(double seconds = 0.2);

}  // namespace balancenet::metrics
