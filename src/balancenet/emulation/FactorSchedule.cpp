// Parsing and lookup of per-node factor schedules.
#include "balancenet/emulation/FactorSchedule.h"

#include <algorithm>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/ParseNumber.h"

namespace balancenet::emulation {
namespace {

std::vector<std::string> splitOn(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, sep)) parts.push_back(item);
  return parts;
}

double number(const std::string& flag, const std::string& text, bool allowZero) {
  const auto v = parseFiniteNumber(text);
  if (!v || !(allowZero ? *v >= 0 : *v > 0))
    throw UsageError(fmt::format("{}: '{}' is not a {} number", flag, text, allowZero ? "non-negative" : "positive"));
  return *v;
}

}  // namespace

std::vector<double> FactorSchedule::perNode(const std::string& flag, const std::string& list, int worldSize,
                                            bool allowZero) {
  std::vector<double> values;
  for (const auto& item : splitOn(list, ',')) values.push_back(number(flag, item, allowZero));
  if (static_cast<int>(values.size()) != worldSize)
    throw UsageError(fmt::format("{} has {} values but the job has {} workers", flag, values.size(), worldSize));
  return values;
}

FactorSchedule FactorSchedule::parse(const std::string& flag, const std::string& base, const std::string& scheduleFlag,
                                     const std::string& changes, int worldSize) {
  FactorSchedule s;
  if (base.empty()) {
    if (!changes.empty())
      throw UsageError(fmt::format("{} needs {} for the values before the first change", scheduleFlag, flag));
    return s;
  }
  s.base_ = perNode(flag, base, worldSize);
  for (const auto& change : splitOn(changes, ';')) {
    if (change.empty()) continue;
    auto eq = change.find('=');
    if (eq == std::string::npos) throw UsageError(fmt::format("{}: '{}' is not STEP=v1,v2,...", scheduleFlag, change));
    const auto step = parseInteger<int64_t>(change.substr(0, eq));
    if (!step || *step < 0)
      throw UsageError(fmt::format("{}: '{}' does not start with a step number", scheduleFlag, change));
    s.changes_[*step] = perNode(scheduleFlag, change.substr(eq + 1), worldSize);
  }
  return s;
}

double FactorSchedule::smallest() const {
  double least = std::numeric_limits<double>::infinity();
  for (double v : base_) least = std::min(least, v);
  for (const auto& [step, values] : changes_)
    for (double v : values) least = std::min(least, v);
  return least;
}

double FactorSchedule::at(int64_t step, int rank) const {
  const std::vector<double>* current = &base_;
  for (const auto& [from, values] : changes_) {
    if (from > step) break;
    current = &values;
  }
  return current->at(rank);
}

std::vector<double> FactorSchedule::pick(const std::vector<double>& perNode, const std::vector<int>& nodes) {
  if (perNode.empty()) return {};
  std::vector<double> picked;
  for (int n : nodes) picked.push_back(perNode[n % perNode.size()]);
  return picked;
}

FactorSchedule FactorSchedule::forNodes(const std::vector<int>& nodes) const {
  FactorSchedule s;
  s.base_ = pick(base_, nodes);
  for (const auto& [from, values] : changes_) s.changes_[from] = pick(values, nodes);
  return s;
}

}  // namespace balancenet::emulation
