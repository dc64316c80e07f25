// Median: the robust centre of a handful of timings (latency probes, per-window compute times).
#pragma once
#include <algorithm>
#include <vector>

namespace balancenet {

// Median of the values (mean of the two middle ones for an even count); 0 for none. Sorts `values`.
inline double medianInPlace(std::vector<double>& values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

inline double median(std::vector<double> values) { return medianInPlace(values); }

}  // namespace balancenet
