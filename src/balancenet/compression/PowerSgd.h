// PowerSgd: the arithmetic of PowerSGD (Vogels, Karimireddy, Jaggi 2019), one step of power iteration per matrix.
// A gradient matrix M (n x m) is sent as P = M Q (n x r) and then Q' = M^T orth(P) (m x r): (n + m) r numbers
// instead of n m. Both are linear in M, so summing each rank's P and Q' over the group is the same as compressing the
// summed gradient: unequal shares give the one process's low-rank step, not an average of ranks. Q' is kept for
// the next step (the warm start that makes one iteration a step enough). Pure tensor functions: the exchange that
// sums P and Q' is comm/compressed/PowerSgdAllReduce.h.
#pragma once
#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

namespace balancenet::compression {

// A parameter of shape (d0, d1, ...) is the matrix d0 x (d1 * ...), as PyTorch's hook views it; a vector has no
// matrix form. Compressed only where rank r is below both sides and the factors are smaller than the matrix
// ((n + m) r < n m); the rest travels whole.
bool compressesMatrix(int64_t rows, int64_t cols, int rank);
// rows and cols of `shape`'s matrix form; {numel, 1} for a vector or a scalar.
std::pair<int64_t, int64_t> matrixShape(const std::vector<int64_t>& shape);

// Orthonormalises the columns of `p` (n x r) in place, in column order (Gram-Schmidt, twice for stability: the
// columns of M Q can be nearly parallel). A zero column stays zero: a zero gradient sends zeros, not NaN.
void orthonormalizeColumns(at::Tensor& p);

// The starting Q (cols x r, float32, standard normal): drawn from `seed` alone, so that every rank and the one
// process start from the same Q (then P summed over ranks is the summed gradient's P).
at::Tensor initialQ(int64_t cols, int rank, uint64_t seed, const at::TensorOptions& options);

// One process's PowerSGD step of `m` (n x m) with the warm start `q` (m x r): the rank-r approximation
// orth(M Q) orth(M Q)^T M, and q becomes M^T orth(M Q). Exact for a matrix of rank <= r (almost every q).
at::Tensor lowRankApproximation(const at::Tensor& m, at::Tensor& q);

}  // namespace balancenet::compression
