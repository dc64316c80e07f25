// RecomputeMode: --recompute's three answers, and their spelling on the command line and in the job's JSON.
#pragma once
#include <string>

namespace balancenet::recompute {

enum class RecomputeMode {
  None,    // every activation kept for backward (PyTorch's default)
  Blocks,  // every worker keeps only its blocks' inputs and runs each block's forward again in backward
  Auto,    // each worker on its own: blocks where its memory would hold its share down (recompute::recomputePays)
};

// "none", "blocks" or "auto"; anything else: UsageError in one line.
RecomputeMode parseRecomputeMode(const std::string& text);
const char* recomputeModeName(RecomputeMode mode);

}  // namespace balancenet::recompute
