// MicroSteps: the cut of a share into micro-steps.
#include "balancenet/trainer/MicroSteps.h"

#include <algorithm>

namespace balancenet::trainer {

std::vector<MicroStep> microSteps(int64_t rows, int64_t count) {
  const int64_t pieces = std::max<int64_t>(1, std::min(count, rows));
  std::vector<MicroStep> out;
  for (int64_t k = 0; k < pieces; ++k) {
    const int64_t begin = rows * k / pieces, end = rows * (k + 1) / pieces;
    out.push_back({begin, end - begin});
  }
  return out;
}

}  // namespace balancenet::trainer
