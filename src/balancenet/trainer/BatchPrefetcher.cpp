// BatchPrefetcher: one read ahead on a background thread, checked against the draws actually needed.
#include "balancenet/trainer/BatchPrefetcher.h"

#include <utility>

namespace balancenet::trainer {
namespace {

bool sameDraws(const std::vector<data::Draw>& a, const std::vector<data::Draw>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].index != b[i].index || a[i].augmentSeed != b[i].augmentSeed) return false;
  return true;
}

}  // namespace

BatchPrefetcher::~BatchPrefetcher() { drop(); }

void BatchPrefetcher::drop() {
  if (!pending_.valid()) return;
  try {
    pending_.get();  // the thread reads the dataset: it must end before the dataset may go
  } catch (...) {
    // A failed guess is no failure: the batch is read again when it is needed.
  }
}

data::Batch BatchPrefetcher::take(const std::vector<data::Draw>& draws) {
  if (pending_.valid() && sameDraws(pendingDraws_, draws)) {
    ++hits_;
    return pending_.get();  // a read that failed throws here, as a read now would
  }
  if (pending_.valid()) ++misses_;
  drop();
  return read(draws);
}

data::Batch BatchPrefetcher::read(const std::vector<data::Draw>& draws) const {
  data::Batch batch = dataset_.trainingBatch(draws);
  if (pinned_) {
    batch.inputs = batch.inputs.pin_memory();
    batch.targets = batch.targets.pin_memory();
  }
  return batch;
}

void BatchPrefetcher::prefetch(std::vector<data::Draw> draws) {
  drop();
  pendingDraws_ = std::move(draws);
  pending_ = std::async(std::launch::async, [this, draws = pendingDraws_] { return read(draws); });
}

}  // namespace balancenet::trainer
