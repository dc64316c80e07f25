// The golden comparisons' bound, derived from the float error it tolerates.
//
// What differs. A distributed (or pipelined, offloaded, resumed) run and one process train on the same samples
// with the same operations; they sum in another order. The mean gradient of a step is summed over ranks,
// replicas and micro-batches (and by a ring, a tree or a server), and inside the kernels over samples, positions
// and features, blocked by the batch each call is given and by the instruction set: MKL's and oneDNN's AVX-512
// and AVX2 kernels block differently, so the same comparison rounds differently on another CPU. Nothing else
// differs, so nothing else may be tolerated.
//
// How much one step moves a value. A float32 sum of n terms is off by at most (n - 1) u sum|x_i| (u = eps/2 =
// 2^-24), whatever the order: the bound of two orders' difference. Rounding errors of either sign add like a
// random walk, ~sqrt(n) u max|x_i| each; over the ~10^4 values compared the largest is ~4 of those. The longest
// sums here are the cnn's convolution weight gradients, over batch x positions = 32 x 28 x 28 ~ 2.5e4 terms
// (sqrt ~ 160), whose terms are O(1): inputs are normalised, a softmax cross-entropy's gradient per logit is in
// [-1, 1], and the batch mean divides by the batch. The update takes lr times that, and momentum mu carries it
// into the next steps, sum mu^k <= 1 / (1 - mu): lr / (1 - mu) <= 0.1 / 0.1 = 1 in every comparison here. So a
// step moves a parameter by ~4 x 160 u = 320 u ~ 160 eps of the magnitudes in play, and the run compared and
// its reference each do: kReorderedStepUlps = 256 eps per step. The magnitude in play is max(1, max|value|):
// the gradient terms' O(1), or the value itself where it is larger (an update rounds to the value's own ulp).
// Steps add their errors (a step's difference changes the next gradients only by lr times the curvature), so
// the bound grows with the steps.
//
// What it must still catch. A gradient weighted wrongly, dropped or counted twice moves a parameter by ~lr |g|
// in one step, |g| ~ 1e-2 .. 1: 1e-3 .. 1e-1, 10^4 .. 10^6 eps, where the bound allows 256 eps a step (3e-5).
// Measured (the comparisons print max |difference| and the bound; torch 2.11 on an AVX2-only Zen 3, and with MKL and
// oneDNN held to SSE4): SGD comparisons <= 1.2e-7, Adam ones <= 8.2e-6, against bounds of 3e-5 .. 1.2e-3; the cnn
// pipelines that failed a fixed 1e-5 on such a CPU (2.4e-5 after 4 steps, as reported) are a fifth of theirs.
//
// Adam divides each update by the root of its gradient's second moment: the gradient's scale cancels and its
// error enters relative, lr |dg| / |g|. With lr = 0.01 (a tenth of SGD's) that is within the bound wherever
// |g| is at least a tenth of the terms it sums; a gradient that is zero in exact arithmetic (rounding noise,
// e.g. attention's key bias) becomes steps of ~lr, which no float bound covers: those comparisons train SGD.
//
// Where rounding decides a discrete choice (a max-pool's largest input, a ReLU's sign, BatchNorm's 1 / sqrt(var +
// eps) of a near-constant channel), one flip moves a step by a term of the gradient, which no eps-scaled bound
// covers either: such a comparison measures its floor as the spread of the one-process reference itself
// (reorderedReferenceTraining vs referenceTraining) and allows twice that (SyncBatchNormTest).
//
// Under autocast (--precision bf16, fp16) the products and convolutions round their outputs to the low type, eps =
// 2^-7 (bf16) or 2^-10 (fp16) where float32's is 2^-23, and they block their sums by the batch they are given, as
// above: a run whose ranks compute 24 and 8 rows rounds some values to the neighbouring low-type number where one
// process computing 32 does not. No float32 bound holds then; the error is relative to the gradient instead. A term of
// a weight's gradient passes through the rounded products of the layers above it twice, forward and backward: at
// most 4 of them each way in the models compared (the cnn's 2 convolutions and 2 linear layers, the mlp's 3 linear
// ones), each off by at most u = eps/2 of itself, so the term by at most 8u = 4 eps, and the gradient, their sum,
// by 4 eps of the sum of their sizes: of its own size where the terms agree in sign (errors of either sign cancel
// where they do not). An update is lr times the gradient and a run's movement of a parameter the sum of its updates,
// so each run is within 4 eps of its exact movement and the two within 8 eps of the largest movement, max
// |reference - start|; the weights, the optimiser and the sum across ranks are float32 (the bound above, far
// smaller). Steps feed their errors forward only through the curvature, and the comparisons are a few steps long.
// It still catches a wrong weight: sharing 24:8 as equals scales a rank's gradient by 2/3 or 2, a third of the
// update or more: ~40 bf16 eps, ~340 fp16 eps. Measured (2 or 3 ranks against one process, up to 6 steps, on an
// AVX-512 Xeon with and without MKL and oneDNN held to AVX2 and SSE4): 0.3 to 2 eps of the movement.
//
// The same bound holds for gradients compressed on the wire (--grad-compress, with error feedback), compared with one
// float32 process: a step sends each rank's gradient plus the residual the last cast left, cast once (u of itself;
// the feedback carries the loss into the next step, so these errors do not add up: over the run they sum to the
// last residual, u of one gradient), and the ring adds the P shares in the wire type, rounding each of its P - 1
// partial sums (u of the sum of the shares' sizes each). That is at most (P + 1) u = (P + 1)/2 eps of a step's
// gradient, 2 eps at the 3 ranks compared, within the 8 eps of the movement above. Measured: 0.2 to 0.6 eps.
#include "testing/FloatBound.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <limits>

namespace balancenet::testing {

double exactnessBound(const std::vector<at::Tensor>& reference, int64_t steps, double ulpsPerStep) {
  double magnitude = 1;
  for (const auto& t : reference)
    if (t.numel() > 0 && t.is_floating_point()) magnitude = std::max(magnitude, t.abs().max().item<double>());
  return ulpsPerStep * std::numeric_limits<float>::epsilon() * static_cast<double>(std::max<int64_t>(steps, 1)) *
         magnitude;
}

double mixedPrecisionBound(const std::vector<at::Tensor>& reference, const std::vector<at::Tensor>& start, double eps) {
  double moved = 0;
  for (size_t i = 0; i < reference.size() && i < start.size(); ++i)
    if (reference[i].is_floating_point() && reference[i].sizes().equals(start[i].sizes()))
      moved = std::max(moved, (reference[i].to(at::kDouble) - start[i].to(at::kDouble)).abs().max().item<double>());
  return 8 * eps * moved;
}

}  // namespace balancenet::testing
