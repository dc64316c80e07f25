// GradCompression: how gradients cross the wire (--grad-compress). Lossy, so never the default: the exchange stays
// exact unless the user asks. The shares are weighted before compressing (each rank's gradient is already its share
// of the global batch's), so unequal shares still sum to the whole batch's gradient up to the compression error,
// and error feedback carries what compression lost into the next step. Three families:
//   - casts (bf16, fp16): the buffer in --precision's 16-bit formats, summed by the ordinary all-reduce;
//   - powersgd[:RANK] (Vogels et al.): each matrix sent as two rank-RANK factors (PowerSgd.h);
//   - int8: 8-bit codes with one scale per chunk, summed by an all-to-all and an all-gather (Int8Quantizer.h).
#pragma once
#include <cstdint>
#include <string>

#include <c10/core/ScalarType.h>

#include "balancenet/core/FieldList.h"
#include "balancenet/precision/Precision.h"

namespace balancenet::compression {

enum class GradCompression { None, Bf16, Fp16, PowerSgd, Int8 };

// What --grad-compress and --compress-warmup name.
struct CompressionOptions {
  GradCompression kind = GradCompression::None;
  int rank = 1;             // powersgd's RANK: the columns of each matrix's factors
  int64_t warmupSteps = 0;  // the first steps travel exact (PyTorch's start_powerSGD_iter), every kind alike
  // What compression loses is added to the next step's gradient (--no-error-feedback: dropped, for comparison).
  bool errorFeedback = true;

  // The fields a launcher sends its workers (core/FieldList.h): every one.
  BALANCENET_FIELDS(kind, rank, warmupSteps, errorFeedback);
};
BALANCENET_CHECK_FIELDS(CompressionOptions);

// "none", "bf16", "fp16", "int8", "powersgd" (rank 1) or "powersgd:RANK" (RANK >= 1); UsageError naming
// --grad-compress otherwise.
CompressionOptions parseGradCompression(const std::string& name);
const char* gradCompressionName(GradCompression compression);
// The name parseGradCompression reads back: "powersgd:2" for rank 2.
std::string gradCompressionName(const CompressionOptions& options);
inline bool compresses(GradCompression compression) { return compression != GradCompression::None; }
inline bool compresses(const CompressionOptions& options) { return compresses(options.kind); }
// A cast family: the wire type is a float format the ordinary all-reduce sums.
inline bool casts(GradCompression compression) {
  return compression == GradCompression::Bf16 || compression == GradCompression::Fp16;
}
// What an exchange says of its residuals: "with error feedback", or "without error feedback" (--no-error-feedback).
inline const char* feedbackName(bool errorFeedback) {
  return errorFeedback ? "with error feedback" : "without error feedback";
}
// The --precision format a cast sends: fp32 for the others (none, and the non-cast families' float32 messages).
inline precision::Precision formatOf(GradCompression compression) {
  return compression == GradCompression::Bf16   ? precision::Precision::Bf16
         : compression == GradCompression::Fp16 ? precision::Precision::Fp16
                                                : precision::Precision::Fp32;
}
// The element type a cast sends: Float for the others.
inline c10::ScalarType wireType(GradCompression compression) { return precision::lowType(formatOf(compression)); }
// The bytes `float32Bytes` of gradient take on the wire under a cast (unchanged for the others).
inline int64_t wireBytes(int64_t float32Bytes, GradCompression compression) {
  return float32Bytes / static_cast<int64_t>(sizeof(float)) *
         static_cast<int64_t>(c10::elementSize(wireType(compression)));
}

}  // namespace balancenet::compression
