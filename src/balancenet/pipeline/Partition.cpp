// Partition: --partition's text and the uniform default.
#include "balancenet/pipeline/Partition.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::pipeline {
namespace {

// Digits only (no sign, no spaces inside); saturates far above any model's block count so that a huge
// number is reported as out of range rather than as junk.
std::optional<size_t> blockIndex(const std::string& text) {
  if (text.empty()) return std::nullopt;
  size_t value = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    value = std::min<size_t>(value * 10 + static_cast<size_t>(c - '0'), size_t{1} << 40);
  }
  return value;
}

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(' ');
  if (first == std::string::npos) return {};
  return text.substr(first, text.find_last_not_of(' ') - first + 1);
}

struct InclusiveRange {
  size_t first, last;
  std::string text;  // as the user wrote it, for messages (a saturated index would print wrong)
};

// "9-17" or "4"; "--partition: ..." for anything else.
InclusiveRange inclusiveRange(const std::string& item, size_t stage) {
  const std::string text = trimmed(item);
  if (text.empty()) throw UsageError(fmt::format("--partition: the range of stage {} is empty", stage));
  const auto dash = text.find('-');
  const auto first = blockIndex(text.substr(0, dash));
  const auto last = dash == std::string::npos ? first : blockIndex(text.substr(dash + 1));
  if (!first || !last)
    throw UsageError(fmt::format("--partition: '{}' (stage {}) is not a block range such as 0-9 or 4", text, stage));
  return {*first, *last, text};
}

std::string rangeText(size_t first, size_t last) {
  return first == last ? std::to_string(first) : fmt::format("{}-{}", first, last);
}

std::string noStage(size_t first, size_t last) {
  return first == last ? fmt::format("block {} belongs to no stage", first)
                       : fmt::format("blocks {}-{} belong to no stage", first, last);
}

}  // namespace

std::string Partition::str() const {
  std::string out;
  for (size_t s = 0; s < stages.size(); ++s) out += (s ? "," : "") + rangeText(stages[s].first, stages[s].end - 1);
  return out;
}

Partition Partition::uniform(size_t blocks, int stages) {
  if (stages < 1) throw UsageError(fmt::format("--pipeline-stages must be at least 1; got {}", stages));
  const auto count = static_cast<size_t>(stages);
  if (blocks < count)
    throw UsageError(fmt::format(
        "--pipeline-stages {} needs at least {} blocks but the model has {} (balancenet models --blocks MODEL "
        "lists them)",
        stages, stages, blocks));
  Partition p;
  size_t first = 0;
  for (size_t s = 0; s < count; ++s) {
    const size_t size = blocks / count + (s < blocks % count ? 1 : 0);
    p.stages.push_back({first, first + size});
    first += size;
  }
  return p;
}

Partition Partition::parse(const std::string& text, size_t blocks, int stages) {
  if (blocks == 0) throw InternalError("partitioning a model of no blocks");  // every Network has at least one
  // Items first, so that junk anywhere is named before a count that junk may have caused.
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) items.push_back(item);
  if (!text.empty() && text.back() == ',') items.emplace_back();  // getline drops a trailing empty item
  if (items.empty()) throw UsageError("--partition is empty; expected one block range per stage, e.g. 0-9,10-17");
  std::vector<InclusiveRange> ranges;
  for (size_t s = 0; s < items.size(); ++s) ranges.push_back(inclusiveRange(items[s], s));

  if (ranges.size() != static_cast<size_t>(stages))
    throw UsageError(fmt::format("--partition names {} stage{} but --pipeline-stages is {}", ranges.size(),
                                 ranges.size() == 1 ? "" : "s", stages));
  Partition p;
  size_t expected = 0;  // the first block no earlier stage runs
  for (size_t s = 0; s < ranges.size(); ++s) {
    const auto& [first, last, written] = ranges[s];
    if (last < first) throw UsageError(fmt::format("--partition: stage {}'s range {} is reversed", s, written));
    if (last >= blocks)
      throw UsageError(
          fmt::format("--partition: stage {}'s range {} goes past the last block {} (the model has {} "
                      "blocks)",
                      s, written, blocks - 1, blocks));
    if (first != expected)
      throw UsageError(fmt::format("--partition: stage {} starts at block {}, expected {} ({})", s, first, expected,
                                   first < expected ? "it overlaps the stage before" : noStage(expected, first - 1)));
    p.stages.push_back({first, last + 1});
    expected = last + 1;
  }
  if (expected != blocks)
    throw UsageError(fmt::format("--partition: {} (the model has {} blocks)", noStage(expected, blocks - 1), blocks));
  return p;
}

}  // namespace balancenet::pipeline
