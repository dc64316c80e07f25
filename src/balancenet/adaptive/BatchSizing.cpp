// Parsing --global-batch's three forms.
#include "balancenet/adaptive/BatchSizing.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "balancenet/core/Error.h"
#include "balancenet/core/ParseNumber.h"

namespace balancenet::adaptive {
namespace {

const char* const kForms =
    "give a number (256), auto[:MIN:MAX[:START]] (auto:64:2048) or B by step (64,128@200,256@400)";

int64_t positive(const std::string& word, const std::string& text) {
  const auto v = parseInteger(word);
  if (!v || *v < 1)
    throw UsageError(fmt::format("--global-batch '{}': '{}' is not a positive integer; {}", text, word, kForms));
  return *v;
}

std::vector<std::string> splitOn(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, separator)) parts.push_back(part);
  if (!text.empty() && text.back() == separator) parts.push_back("");
  return parts;
}

BatchSizing parseAuto(const std::string& text) {
  BatchSizing s;
  s.mode = BatchSizing::Mode::Auto;
  s.minBatch = kDefaultAutoMinBatch;
  s.maxBatch = kDefaultAutoMaxBatch;
  s.startBatch = kDefaultAutoStartBatch;
  if (text == "auto") return s;
  const auto parts = splitOn(text, ':');
  if (parts.size() != 3 && parts.size() != 4)
    throw UsageError(fmt::format("--global-batch '{}': auto takes both bounds, auto:MIN:MAX[:START]", text));
  s.minBatch = positive(parts[1], text);
  s.maxBatch = positive(parts[2], text);
  if (s.maxBatch < s.minBatch)
    throw UsageError(fmt::format("--global-batch '{}': MAX {} is below MIN {}", text, s.maxBatch, s.minBatch));
  s.startBatch =
      parts.size() == 4 ? positive(parts[3], text) : std::clamp(kDefaultAutoStartBatch, s.minBatch, s.maxBatch);
  if (s.startBatch < s.minBatch || s.startBatch > s.maxBatch)
    throw UsageError(fmt::format("--global-batch '{}': START {} is outside [MIN {}, MAX {}]", text, s.startBatch,
                                 s.minBatch, s.maxBatch));
  return s;
}

BatchSizing parseSchedule(const std::string& text) {
  BatchSizing s;
  s.mode = BatchSizing::Mode::Schedule;
  for (const auto& entry : splitOn(text, ',')) {
    const auto at = entry.find('@');
    const int64_t batch = positive(entry.substr(0, at), text);
    int64_t step = 0;
    if (at != std::string::npos) {
      const auto v = parseInteger(entry.substr(at + 1));
      if (!v || *v < 0)
        throw UsageError(fmt::format("--global-batch '{}': '{}' is not B@STEP; {}", text, entry, kForms));
      step = *v;
    } else if (!s.schedule.empty()) {
      throw UsageError(fmt::format("--global-batch '{}': every B after the first needs @STEP; {}", text, kForms));
    }
    if (s.schedule.empty() && step != 0)
      throw UsageError(fmt::format("--global-batch '{}': the first B is for step 0 (write it without @)", text));
    if (!s.schedule.empty() && step <= s.schedule.back().first)
      throw UsageError(
          fmt::format("--global-batch '{}': steps must increase ({} after {})", text, step, s.schedule.back().first));
    s.schedule.emplace_back(step, batch);
  }
  return s;
}

}  // namespace

int64_t BatchSizing::largest() const {
  if (mode == Mode::Auto) return maxBatch;
  int64_t most = 0;
  for (const auto& [step, batch] : schedule) most = std::max(most, batch);
  return most;
}

BatchSizing parseGlobalBatch(const std::string& text, int64_t& initial) {
  if (text.rfind("auto", 0) == 0) {
    BatchSizing s = parseAuto(text);
    initial = s.startBatch;
    return s;
  }
  if (text.find_first_of(",@") == std::string::npos) {
    initial = positive(text, text);
    return {};
  }
  BatchSizing s = parseSchedule(text);
  initial = s.schedule.front().second;
  return s;
}

int64_t scheduledBatch(const std::vector<std::pair<int64_t, int64_t>>& schedule, int64_t step) {
  int64_t batch = schedule.empty() ? 0 : schedule.front().second;
  for (const auto& [from, b] : schedule)
    if (from <= step) batch = b;
  return batch;
}

}  // namespace balancenet::adaptive
