// LabelPartition: the seeded Dirichlet label split, its label counts and partition.csv.
#include "balancenet/federated/LabelPartition.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "balancenet/core/AtomicFile.h"
#include "balancenet/core/Error.h"
#include "balancenet/core/ParseNumber.h"
#include "balancenet/core/PortableRandom.h"
#include "balancenet/federated/FederatedOptions.h"
#include "balancenet/federated/PortableGamma.h"

namespace balancenet::federated {

namespace {

// Salts of the partition's generators, apart from those of sampling and local steps (ClientSampling).
constexpr uint64_t kIidSalt = 0x11d5'0000'0000'0000ULL;
constexpr uint64_t kLabelSalt = 0x1abe'1000'0000'0000ULL;

void checkArguments(const std::vector<int64_t>& labels, int clients, double alpha, int64_t numClasses) {
  if (clients < 1) throw UsageError(fmt::format("--clients must be at least 1, got {}", clients));
  if (!(alpha > 0)) throw UsageError(fmt::format("--alpha must be positive or 'iid', got {}", alpha));
  if (static_cast<int64_t>(labels.size()) < clients)
    throw UsageError(fmt::format("--clients {} is more than the {} training samples: every client needs one", clients,
                                 labels.size()));
  if (numClasses < 1) throw UsageError(fmt::format("the data set has {} classes; need at least 1", numClasses));
  for (int64_t l : labels)
    if (l < 0 || l >= numClasses)
      throw UsageError(fmt::format("a training label is {}, outside [0, {})", l, numClasses));
}

std::vector<std::vector<int64_t>> iidShards(int64_t samples, int clients, uint64_t seed) {
  std::vector<int64_t> order(static_cast<size_t>(samples));
  std::iota(order.begin(), order.end(), int64_t{0});
  auto gen = seededGenerator(seed, kIidSalt);
  portableShuffle(order, gen);
  std::vector<std::vector<int64_t>> shards(static_cast<size_t>(clients));
  for (int c = 0; c < clients; ++c) {
    // Equal as possible: shard sizes differ by at most one.
    const auto begin = order.begin() + samples * c / clients;
    const auto end = order.begin() + samples * (c + 1) / clients;
    shards[static_cast<size_t>(c)].assign(begin, end);
  }
  return shards;
}

std::vector<std::vector<int64_t>> dirichletSplit(const std::vector<int64_t>& labels, int clients, double alpha,
                                                 uint64_t seed, int64_t numClasses) {
  std::vector<std::vector<int64_t>> byLabel(static_cast<size_t>(numClasses));
  for (size_t i = 0; i < labels.size(); ++i) byLabel[static_cast<size_t>(labels[i])].push_back(int64_t(i));
  std::vector<std::vector<int64_t>> shards(static_cast<size_t>(clients));
  for (int64_t k = 0; k < numClasses; ++k) {
    // One generator per label: label k's split does not depend on how many draws the others took.
    auto gen = seededGenerator(seed, kLabelSalt + static_cast<uint64_t>(k));
    const auto share = dirichletDraw(gen, alpha, clients);
    auto& indices = byLabel[static_cast<size_t>(k)];
    portableShuffle(indices, gen);
    const auto n = static_cast<double>(indices.size());
    double cumulative = 0;
    size_t begin = 0;
    for (int c = 0; c < clients; ++c) {
      cumulative += share[static_cast<size_t>(c)];
      // The last cut is the end exactly, whatever the rounding of the cumulative sum.
      const size_t end =
          c + 1 == clients ? indices.size() : std::min(indices.size(), size_t(std::llround(cumulative * n)));
      auto& shard = shards[static_cast<size_t>(c)];
      for (size_t i = begin; i < end; ++i) shard.push_back(indices[i]);
      begin = std::max(begin, end);
    }
  }
  return shards;
}

// A client with no samples would have nothing to train on: each empty shard, in client order, takes the
// highest index of the then largest shard (the lowest-numbered among equals). Some shard holds two or more
// while one is empty, as there are at least as many samples as clients.
void fillEmptyShards(std::vector<std::vector<int64_t>>& shards) {
  for (auto& empty : shards) {
    if (!empty.empty()) continue;
    auto largest = std::max_element(shards.begin(), shards.end(),
                                    [](const auto& a, const auto& b) { return a.size() < b.size(); });
    empty.push_back(largest->back());
    largest->pop_back();
  }
}

}  // namespace

std::vector<std::vector<int64_t>> dirichletShards(const std::vector<int64_t>& labels, int clients, double alpha,
                                                  uint64_t seed, int64_t numClasses) {
  checkArguments(labels, clients, alpha, numClasses);
  auto shards = std::isinf(alpha) ? iidShards(static_cast<int64_t>(labels.size()), clients, seed)
                                  : dirichletSplit(labels, clients, alpha, seed, numClasses);
  for (auto& s : shards) std::sort(s.begin(), s.end());
  fillEmptyShards(shards);
  return shards;
}

std::vector<std::vector<int64_t>> labelCounts(const std::vector<std::vector<int64_t>>& shards,
                                              const std::vector<int64_t>& labels, int64_t numClasses) {
  std::vector<std::vector<int64_t>> counts(shards.size(), std::vector<int64_t>(static_cast<size_t>(numClasses)));
  for (size_t c = 0; c < shards.size(); ++c)
    for (int64_t i : shards[c]) {
      if (i < 0 || i >= static_cast<int64_t>(labels.size()))
        throw InternalError(fmt::format("labelCounts: shard {} holds index {} of {} samples", c, i, labels.size()));
      const int64_t k = labels[static_cast<size_t>(i)];
      if (k < 0 || k >= numClasses)
        throw UsageError(fmt::format("a training label is {}, outside [0, {})", k, numClasses));
      ++counts[c][static_cast<size_t>(k)];
    }
  return counts;
}

void writePartitionCsv(const std::string& path, const std::vector<std::vector<int64_t>>& counts,
                       const std::vector<std::string>& names) {
  size_t classes = 0;  // enrolled clients' data may differ in classes seen: the widest row
  for (const auto& row : counts) classes = std::max(classes, row.size());
  std::string csv = names.empty() ? "client,samples" : "client,name,samples";
  for (size_t k = 0; k < classes; ++k) csv += fmt::format(",label_{}", k);
  csv += "\n";
  for (size_t c = 0; c < counts.size(); ++c) {
    csv += names.empty() ? fmt::format("{}", c) : fmt::format("{},{}", c, names[c]);
    csv += fmt::format(",{}", std::accumulate(counts[c].begin(), counts[c].end(), int64_t{0}));
    for (size_t k = 0; k < classes; ++k) csv += fmt::format(",{}", k < counts[c].size() ? counts[c][k] : 0);
    csv += "\n";
  }
  writeFileAtomically(path, csv);
}

double parseAlpha(const std::string& text) {
  if (text == "iid") return kIid;
  const auto v = parseFiniteNumber(text);
  if (!v || !(*v > 0))
    throw UsageError(fmt::format("--alpha '{}': expected a positive number (e.g. 0.1, 0.5) or 'iid'", text));
  return *v;
}

}  // namespace balancenet::federated
