// Split arithmetic and validation.
#include "balancenet/core/Split.h"

#include <numeric>
#include <sstream>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/ParseNumber.h"

namespace balancenet {
namespace {

// The first way `batches` breaks a split of globalBatch over worldSize workers, or "" if none; in the
// user's words (the flags) for --split, in the program's for an internal check.
std::string splitProblem(const std::vector<int64_t>& batches, int worldSize, int64_t globalBatch, int64_t total,
                         bool userInput) {
  const char* split = userInput ? "--split" : "the split";
  const char* batch = userInput ? "--global-batch" : "the global batch";
  if (static_cast<int>(batches.size()) != worldSize)
    return fmt::format("{} has {} entries but the job has {} workers", split, batches.size(), worldSize);
  // A worker the balanced policy leaves out of the exchange has 0 (issue 55); the user's --split gives each at least 1.
  const int64_t least = userInput ? 1 : 0;
  for (size_t r = 0; r < batches.size(); ++r)
    if (batches[r] < least)
      return fmt::format("{}: worker {} gets {} samples; every worker needs at least {}", split, r, batches[r], least);
  if (!batches.empty() && total <= 0) return fmt::format("{} gives no worker a sample", split);
  if (total != globalBatch) return fmt::format("{} sums to {} but {} is {}", split, total, batch, globalBatch);
  return {};
}

}  // namespace

int64_t Split::total() const { return std::accumulate(batches.begin(), batches.end(), int64_t{0}); }

int64_t Split::offsetOf(int rank) const { return std::accumulate(batches.begin(), batches.begin() + rank, int64_t{0}); }

std::string Split::str() const {
  std::string out;
  for (size_t i = 0; i < batches.size(); ++i) out += (i ? "," : "") + std::to_string(batches[i]);
  return out;
}

Split Split::equal(int64_t globalBatch, int worldSize) {
  Split s;
  for (int r = 0; r < worldSize; ++r)
    s.batches.push_back(globalBatch / worldSize + (r < globalBatch % worldSize ? 1 : 0));
  s.validate(worldSize, globalBatch);
  return s;
}

Split Split::parse(const std::string& text, int worldSize, int64_t globalBatch) {
  Split s;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto v = parseInteger<int64_t>(item);
    if (!v) throw UsageError(fmt::format("--split: '{}' is not an integer", item));
    s.batches.push_back(*v);
  }
  if (auto problem = splitProblem(s.batches, worldSize, globalBatch, s.total(), true); !problem.empty())
    throw UsageError(problem);
  return s;
}

void Split::validate(int worldSize, int64_t globalBatch) const {
  if (auto problem = splitProblem(batches, worldSize, globalBatch, total(), false); !problem.empty())
    throw InternalError(fmt::format("split {} breaks its invariant: {}", str(), problem));
}

bool operator==(const Split& a, const Split& b) { return a.batches == b.batches; }

}  // namespace balancenet
