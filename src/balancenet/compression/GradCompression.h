// GradCompression: the number format gradients cross the wire in (--grad-compress). Lossy, so never the default:
// the exchange stays exact unless the user asks. The shares are weighted before the cast (each rank's gradient
// is already its share of the global batch's), so unequal shares still sum to the whole batch's gradient up to the
// compression error, and ErrorFeedback.h carries what each cast lost into the next step. The formats are
// --precision's (precision/Precision.h); none is float32.
#pragma once
#include <cstdint>
#include <string>

#include <c10/core/ScalarType.h>

#include "balancenet/precision/Precision.h"

namespace balancenet::compression {

enum class GradCompression { None, Bf16, Fp16 };

// "none", "bf16" or "fp16"; UsageError naming --grad-compress otherwise.
GradCompression parseGradCompression(const std::string& name);
const char* gradCompressionName(GradCompression compression);
inline bool compresses(GradCompression compression) { return compression != GradCompression::None; }
// The --precision format of the wire: fp32 for none.
inline precision::Precision formatOf(GradCompression compression) {
  return compression == GradCompression::Bf16   ? precision::Precision::Bf16
         : compression == GradCompression::Fp16 ? precision::Precision::Fp16
                                                : precision::Precision::Fp32;
}
// The element type on the wire: Float for none.
inline c10::ScalarType wireType(GradCompression compression) { return precision::lowType(formatOf(compression)); }
// The bytes `float32Bytes` of gradient take on the wire.
inline int64_t wireBytes(int64_t float32Bytes, GradCompression compression) {
  return float32Bytes / static_cast<int64_t>(sizeof(float)) *
         static_cast<int64_t>(c10::elementSize(wireType(compression)));
}

}  // namespace balancenet::compression
