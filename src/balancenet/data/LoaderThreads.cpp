// LoaderThreads: contiguous chunks on std::async threads, exceptions rethrown in chunk order.
#include "balancenet/data/LoaderThreads.h"

#include <algorithm>
#include <exception>
#include <future>
#include <vector>

namespace balancenet::data {

void forEachChunk(int64_t n, int threads, const std::function<void(int64_t, int64_t)>& work) {
  if (n <= 0) return;
  const int64_t chunks = std::clamp<int64_t>(threads, 1, n);
  auto bound = [&](int64_t chunk) { return chunk * n / chunks; };
  std::vector<std::future<void>> others;
  for (int64_t c = 1; c < chunks; ++c) others.push_back(std::async(std::launch::async, work, bound(c), bound(c + 1)));
  std::exception_ptr first;
  try {
    work(0, bound(1));
  } catch (...) {
    first = std::current_exception();
  }
  for (auto& f : others) {
    try {
      f.get();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace balancenet::data
