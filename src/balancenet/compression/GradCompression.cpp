#include "balancenet/compression/GradCompression.h"

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::compression {

GradCompression parseGradCompression(const std::string& name) {
  for (auto c : {GradCompression::None, GradCompression::Bf16, GradCompression::Fp16})
    if (name == gradCompressionName(c)) return c;
  throw UsageError(fmt::format("--grad-compress must be none, bf16 or fp16, got '{}'", name));
}

const char* gradCompressionName(GradCompression compression) {
  return compresses(compression) ? precision::precisionName(formatOf(compression)) : "none";
}

}  // namespace balancenet::compression
