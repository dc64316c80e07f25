// StateSlices: proportional shares of the elements by largest remainder.
#include "balancenet/memory/StateSlices.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "balancenet/core/Error.h"

namespace balancenet::memory {

std::vector<int64_t> stateSlices(int64_t elements, const std::vector<double>& roomBytes) {
  const size_t n = roomBytes.size();
  if (n == 0 || elements < 0) throw InternalError("state slices for no worker or a negative count");
  const double largest = *std::max_element(roomBytes.begin(), roomBytes.end());
  std::vector<double> weights(n);
  for (size_t r = 0; r < n; ++r) weights[r] = roomBytes[r] > 0 ? roomBytes[r] : (largest > 0 ? largest : 1.0);
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<int64_t> sizes(n, 0);
  std::vector<std::pair<double, size_t>> remainders;
  int64_t given = 0;
  for (size_t r = 0; r < n; ++r) {
    const double quota = static_cast<double>(elements) * weights[r] / total;
    const auto whole = static_cast<int64_t>(std::floor(quota));
    sizes[r] = whole;
    given += whole;
    remainders.emplace_back(quota - static_cast<double>(whole), r);
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = 0; given < elements; ++i, ++given) ++sizes[remainders[i % n].second];
  // A worker left without an element (a room far below the others') takes one from the largest slice.
  if (elements >= static_cast<int64_t>(n))
    for (size_t r = 0; r < n; ++r)
      if (sizes[r] == 0) {
        --*std::max_element(sizes.begin(), sizes.end());
        sizes[r] = 1;
      }
  return sizes;
}

std::vector<int64_t> sliceOffsets(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> offsets(sizes.size(), 0);
  for (size_t r = 1; r < sizes.size(); ++r) offsets[r] = offsets[r - 1] + sizes[r - 1];
  return offsets;
}

std::vector<Piece> piecesOf(const std::vector<int64_t>& numels, int64_t begin, int64_t length) {
  const int64_t total = std::accumulate(numels.begin(), numels.end(), int64_t{0});
  if (begin < 0 || length < 0 || begin + length > total)
    throw InternalError("a flat range beyond the tensors it slices");
  std::vector<Piece> pieces;
  int64_t start = 0;  // of tensor t in the flat layout
  const int64_t end = begin + length;
  for (size_t t = 0; t < numels.size() && start < end; start += numels[t], ++t) {
    const int64_t from = std::max(begin, start), to = std::min(end, start + numels[t]);
    if (from < to) pieces.push_back({t, from - start, to - from, from - begin});
  }
  return pieces;
}

}  // namespace balancenet::memory
