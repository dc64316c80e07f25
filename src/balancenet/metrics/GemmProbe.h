// GemmProbe: a short float32 matrix-multiply benchmark, the prior for a node's ops/s before any step,
// and the machine's sgemm peak that a run's achieved FLOP/s is compared with.
#pragma once

#include <c10/core/Device.h>

namespace balancenet::metrics {

// Times at::mm on 256x256 float32 matrices with the current intra-op thread count (at::get_num_threads),
// after a warm-up, repeating until `seconds` have elapsed. Returns FLOP/s, counting 2*n^3 per product.
// Blocks the calling thread for about `seconds` and uses the intra-op pool while it runs. Draws nothing
// from the global random generator.
double measureGemmFlops(double seconds = 0.2);

// The best sgemm rate of this machine with the loaded BLAS: the fastest single product, not the mean,
// so a moment of contention on a shared machine lowers it less.
struct GemmPeak {
  double oneThread = 0;   // FLOP/s with one intra-op thread
  double allThreads = 0;  // FLOP/s with `threads` intra-op threads
  int threads = 0;        // the threads the process may keep busy: its affinity mask's CPUs, under its CPU quota
};

// Measures one thread then all threads, about `secondsEach` each, and leaves the intra-op threads (ATen's
// and the BLAS's, see setIntraOpThreads) at the count ATen had on entry. Several workers probing at once
// on one machine share its cores: their allThreads figures are then each a fraction of the machine's.
GemmPeak measureGemmPeak(double secondsEach = 0.05);

// The rate with `threads` intra-op threads, from the two measured points: one thread's rate times the threads, up
// to the all-threads rate; exact at both points. A worker's prior ops/s, so that one probe per process serves both
// the prior and the efficiency report.
double rateWithThreads(const GemmPeak& peak, int threads);

// A GPU's: the best rate of 2048x2048 float32 products on `device` (a 256 product measures a GPU's launch
// latency, not its arithmetic), each timed to its end on the GPU, for about `seconds`. Both GemmPeak rates are it,
// with one thread: what a GPU worker's prior and achieved FLOP/s are measured against.
GemmPeak measureGpuGemmPeak(const c10::Device& device, double seconds = 0.1);

// The peak of this process's device (measureGpuGemmPeak on a GPU, else measureGemmPeak), measured at the first call
// and remembered: every later call returns it, so the probe runs once per process whoever asks. Call it first
// before the others' traffic (before the rendezvous). InternalError if a later call names another device.
const GemmPeak& processGemmPeak(const c10::Device& device);

}  // namespace balancenet::metrics
