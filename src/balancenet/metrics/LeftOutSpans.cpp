// Runs of batch-0 rows per rank.
#include "balancenet/metrics/LeftOutSpans.h"

#include <map>

#include <fmt/format.h>

namespace balancenet::metrics {

std::vector<LeftOutSpan> leftOutSpans(const StepTable& table) {
  std::map<int, std::vector<LeftOutSpan>> byRank;
  for (const auto& r : table.records()) {  // sorted by (step, rank)
    if (r.stage != 0 || r.batch != 0) continue;
    auto& spans = byRank[r.rank];
    if (!spans.empty() && spans.back().toStep == r.step)
      spans.back().toStep = r.step + 1;
    else
      spans.push_back({r.rank, r.step, r.step + 1});
  }
  std::vector<LeftOutSpan> out;
  for (auto& [rank, spans] : byRank) out.insert(out.end(), spans.begin(), spans.end());
  return out;
}

std::string describe(const std::vector<LeftOutSpan>& spans, int64_t steps) {
  std::string out;
  for (const auto& s : spans)
    out += fmt::format("{}rank {} left out of the exchange for steps {}-{} ({} of {})", out.empty() ? "" : "\n", s.rank,
                       s.fromStep, s.toStep - 1, s.toStep - s.fromStep, steps);
  return out;
}

nlohmann::json toJson(const std::vector<LeftOutSpan>& spans) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : spans) out.push_back({{"rank", s.rank}, {"from_step", s.fromStep}, {"to_step", s.toStep}});
  return out;
}

}  // namespace balancenet::metrics
