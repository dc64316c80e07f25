// LoaderThreads: a batch's per-sample work (decoding, resizing) split over a few threads.
#pragma once
#include <cstdint>
#include <functional>

namespace balancenet::data {

// Calls work(begin, end) over [0, n) cut into min(threads, n) contiguous chunks, the first on the calling
// thread and the others on std::async threads, and returns when all are done. The first chunk's exception
// (in chunk order) is rethrown after every chunk has finished. Threads are started per call: a thread
// start costs tens of microseconds, a decoded image hundreds, so a standing pool would save little and
// add a lifetime to manage.
void forEachChunk(int64_t n, int threads, const std::function<void(int64_t begin, int64_t end)>& work);

}  // namespace balancenet::data
