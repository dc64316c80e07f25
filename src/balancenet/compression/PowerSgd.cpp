#include "balancenet/compression/PowerSgd.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

namespace balancenet::compression {

bool compressesMatrix(int64_t rows, int64_t cols, int rank) {
  return rank < rows && rank < cols && (rows + cols) * rank < rows * cols;
}

std::pair<int64_t, int64_t> matrixShape(const std::vector<int64_t>& shape) {
  int64_t numel = 1;
  for (auto d : shape) numel *= d;
  if (shape.size() < 2) return {numel, 1};
  return {shape[0], shape[0] == 0 ? 0 : numel / shape[0]};
}

void orthonormalizeColumns(at::Tensor& p) {
  const int64_t r = p.size(1);
  for (int pass = 0; pass < 2; ++pass)
    for (int64_t i = 0; i < r; ++i) {
      auto col = p.narrow(1, i, 1);
      for (int64_t j = 0; j < i; ++j) {
        const auto prev = p.narrow(1, j, 1);
        col.sub_(prev * (prev * col).sum());
      }
      const auto norm = col.norm();
      // The smallest normal float: below it the column is taken as zero (dividing would make infinities).
      col.div_(norm.clamp_min(1.17549435e-38f));
      col.mul_((norm > 1.17549435e-38f).to(col.scalar_type()));
    }
}

at::Tensor initialQ(int64_t cols, int rank, uint64_t seed, const at::TensorOptions& options) {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::randn({cols, rank}, generator, at::TensorOptions().dtype(at::kFloat)).to(options.device());
}

at::Tensor lowRankApproximation(const at::Tensor& m, at::Tensor& q) {
  auto p = at::matmul(m, q);
  orthonormalizeColumns(p);
  q = at::matmul(m.t(), p);
  return at::matmul(p, q.t());
}

}  // namespace balancenet::compression
