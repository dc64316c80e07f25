// RecomputeMode: the flag's words.
#include "balancenet/recompute/RecomputeMode.h"

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::recompute {

RecomputeMode parseRecomputeMode(const std::string& text) {
  if (text == "none") return RecomputeMode::None;
  if (text == "blocks") return RecomputeMode::Blocks;
  if (text == "auto") return RecomputeMode::Auto;
  throw UsageError(fmt::format("--recompute must be none, blocks or auto, got '{}'", text));
}

const char* recomputeModeName(RecomputeMode mode) {
  switch (mode) {
    case RecomputeMode::None:
      return "none";
    case RecomputeMode::Blocks:
      return "blocks";
    case RecomputeMode::Auto:
      return "auto";
  }
  return "none";
}

}  // namespace balancenet::recompute
