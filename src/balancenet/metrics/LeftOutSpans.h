// LeftOutSpans: the stretches of steps in which a rank had a share of 0 (the balanced policy left it out of the
// exchange, issue 55), for summary.json and the log at the end of a run.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "balancenet/metrics/StepTable.h"

namespace balancenet::metrics {

struct LeftOutSpan {
  int rank = 0;
  int64_t fromStep = 0, toStep = 0;  // [fromStep, toStep): consecutive steps with a share of 0
};

// In rank order, then step order; stage-0 rows only (a pipeline's stages always have shares).
std::vector<LeftOutSpan> leftOutSpans(const StepTable& table);

// "rank 3 left out of the exchange for steps 20-199 (180 of 200)"; one line per span.
std::string describe(const std::vector<LeftOutSpan>& spans, int64_t steps);
nlohmann::json toJson(const std::vector<LeftOutSpan>& spans);

}  // namespace balancenet::metrics
