#include "balancenet/precision/Precision.h"

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::precision {

Precision parsePrecision(const std::string& name) {
  if (name == "fp32") return Precision::Fp32;
  if (name == "bf16") return Precision::Bf16;
  if (name == "fp16") return Precision::Fp16;
  throw UsageError(fmt::format("--precision must be fp32, bf16 or fp16, got '{}'", name));
}

const char* precisionName(Precision precision) {
  switch (precision) {
    case Precision::Bf16:
      return "bf16";
    case Precision::Fp16:
      return "fp16";
    case Precision::Fp32:
      break;
  }
  return "fp32";
}

c10::ScalarType lowType(Precision precision) {
  switch (precision) {
    case Precision::Bf16:
      return c10::ScalarType::BFloat16;
    case Precision::Fp16:
      return c10::ScalarType::Half;
    case Precision::Fp32:
      break;
  }
  return c10::ScalarType::Float;
}

}  // namespace balancenet::precision
