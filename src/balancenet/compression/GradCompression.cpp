#include "balancenet/compression/GradCompression.h"

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::compression {

namespace {

constexpr const char* kChoices = "none, bf16, fp16, int8, powersgd or powersgd:RANK";

}  // namespace

CompressionOptions parseGradCompression(const std::string& name) {
  CompressionOptions options;
  for (auto c : {GradCompression::None, GradCompression::Bf16, GradCompression::Fp16, GradCompression::Int8,
                 GradCompression::PowerSgd})
    if (name == gradCompressionName(c)) {
      options.kind = c;
      return options;
    }
  const std::string prefix = "powersgd:";
  if (name.rfind(prefix, 0) == 0) {
    const std::string digits = name.substr(prefix.size());
    const bool numeric =
        !digits.empty() && digits.size() <= 6 && digits.find_first_not_of("0123456789") == std::string::npos;
    if (!numeric || std::stoi(digits) < 1)
      throw UsageError(fmt::format("--grad-compress powersgd:RANK needs a RANK of 1 or more, got '{}'", digits));
    options.kind = GradCompression::PowerSgd;
    options.rank = std::stoi(digits);
    return options;
  }
  throw UsageError(fmt::format("--grad-compress must be {}, got '{}'", kChoices, name));
}

const char* gradCompressionName(GradCompression compression) {
  switch (compression) {
    case GradCompression::PowerSgd:
      return "powersgd";
    case GradCompression::Int8:
      return "int8";
    default:
      return compresses(compression) ? precision::precisionName(formatOf(compression)) : "none";
  }
}

std::string gradCompressionName(const CompressionOptions& options) {
  if (options.kind == GradCompression::PowerSgd && options.rank != 1) return fmt::format("powersgd:{}", options.rank);
  return gradCompressionName(options.kind);
}

}  // namespace balancenet::compression
