// Dataset: the augmentation seed, the default training batch and index subsets shared by every format.
#include "balancenet/data/Dataset.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <numeric>
#include <utility>

#include "balancenet/core/PortableRandom.h"

namespace balancenet::data {
namespace {

constexpr uint64_t kEvalSubsetSalt = 0xe7a15;  // apart from the seed's other uses (data order, augmentation)

}  // namespace

Batch Dataset::trainingBatch(const std::vector<Draw>& draws) const {
  std::vector<int64_t> indices;
  indices.reserve(draws.size());
  for (const Draw& d : draws) indices.push_back(d.index);
  return batch(indices);
}

std::vector<int64_t> indexRange(int64_t begin, int64_t end) {
  std::vector<int64_t> out(static_cast<size_t>(std::max<int64_t>(0, end - begin)));
  std::iota(out.begin(), out.end(), begin);
  return out;
}

namespace {

class Subset final : public Dataset {
 public:
  Subset(std::shared_ptr<const Dataset> base, std::vector<int64_t> indices)
      : base_(std::move(base)), indices_(std::move(indices)) {}
  const DatasetSpec& spec() const override { return base_->spec(); }
  int64_t size() const override { return static_cast<int64_t>(indices_.size()); }
  Batch batch(const std::vector<int64_t>& indices) const override { return base_->batch(map(indices)); }
  Batch trainingBatch(const std::vector<Draw>& draws) const override {
    std::vector<Draw> mapped = draws;
    for (Draw& d : mapped) d.index = indices_.at(static_cast<size_t>(d.index));
    return base_->trainingBatch(mapped);
  }
  std::vector<int64_t> classLabels() const override {
    const std::vector<int64_t> all = base_->classLabels();
    if (all.empty()) return {};
    std::vector<int64_t> out;
    out.reserve(indices_.size());
    for (int64_t i : indices_) out.push_back(all[static_cast<size_t>(i)]);
    return out;
  }

 private:
  std::vector<int64_t> map(const std::vector<int64_t>& indices) const {
    std::vector<int64_t> out;
    out.reserve(indices.size());
    for (int64_t i : indices) out.push_back(indices_.at(static_cast<size_t>(i)));
    return out;
  }
  std::shared_ptr<const Dataset> base_;
  std::vector<int64_t> indices_;
};

}  // namespace

std::shared_ptr<const Dataset> subsetOf(std::shared_ptr<const Dataset> base, std::vector<int64_t> indices) {
  return std::make_shared<Subset>(std::move(base), std::move(indices));
}

std::vector<int64_t> seededSampleIndices(int64_t size, int64_t count, uint64_t seed) {
  std::vector<int64_t> all = indexRange(0, size);
  if (count >= size) return all;
  auto gen = seededGenerator(seed, kEvalSubsetSalt);
  for (int64_t i = 0; i < count; ++i)
    std::swap(all[static_cast<size_t>(i)],
              all[static_cast<size_t>(i) + boundedDraw(gen, static_cast<uint64_t>(size - i))]);
  all.resize(static_cast<size_t>(std::max<int64_t>(0, count)));
  std::sort(all.begin(), all.end());
  return all;
}

std::shared_ptr<const Dataset> evaluationSet(std::shared_ptr<const Dataset> test, int64_t samples, uint64_t seed) {
  if (!test || samples == 0) return nullptr;
  if (samples < 0 || samples >= test->size()) return test;
  return subsetOf(test, seededSampleIndices(test->size(), samples, seed));
}

}  // namespace balancenet::data
