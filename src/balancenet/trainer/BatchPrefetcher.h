// BatchPrefetcher: reads the next step's share of samples while this step computes and synchronises, so
// decoding (imagefolder) overlaps with the rest of the step instead of adding to it.
#pragma once
#include <future>
#include <vector>

#include "balancenet/data/Dataset.h"

namespace balancenet::trainer {

// The next step's split is decided at its start (a collective), so what is read ahead is a guess: the
// same split as the step just taken, which holds on most steps. A wrong guess costs the read, never the
// result: take() compares the draws and reads afresh when they differ.
class BatchPrefetcher {
 public:
  // `pinned`: batches come in page-locked host memory, which a GPU worker copies from without blocking.
  explicit BatchPrefetcher(const data::Dataset& dataset, bool pinned = false) : dataset_(dataset), pinned_(pinned) {}
  ~BatchPrefetcher();
  BatchPrefetcher(const BatchPrefetcher&) = delete;
  BatchPrefetcher& operator=(const BatchPrefetcher&) = delete;

  // The training batch of `draws`: the one read ahead when it was for exactly these draws, else read now.
  data::Batch take(const std::vector<data::Draw>& draws);
  // Starts reading `draws` on a thread of its own (one read ahead at a time: an earlier one is dropped).
  void prefetch(std::vector<data::Draw> draws);
  int64_t hits() const { return hits_; }
  int64_t misses() const { return misses_; }

 private:
  void drop();
  data::Batch read(const std::vector<data::Draw>& draws) const;

  const data::Dataset& dataset_;
  const bool pinned_;
  std::future<data::Batch> pending_;
  std::vector<data::Draw> pendingDraws_;
  int64_t hits_ = 0, misses_ = 0;
};

}  // namespace balancenet::trainer
