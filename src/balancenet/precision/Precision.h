// Precision: the number format a worker computes its forward pass in (--precision). The weights, the optimiser's
// state and the exchanged gradients stay fp32 in every mode; only the ops autocast lowers (matrix products,
// convolutions) run in fewer bits. So the weighted exchange stays exact relative to one process at the same
// precision, as it is in fp32.
#pragma once
#include <string>

#include <c10/core/ScalarType.h>

namespace balancenet::precision {

enum class Precision { Fp32, Bf16, Fp16 };

// "fp32", "bf16" or "fp16"; UsageError naming --precision otherwise.
Precision parsePrecision(const std::string& name);
const char* precisionName(Precision precision);
// The type autocast lowers to (Float for fp32, where autocast stays off).
c10::ScalarType lowType(Precision precision);
// fp16's 5 exponent bits lose small gradients to zero unless the loss is scaled up first (LossScaler.h); bf16 has
// fp32's exponent range and needs no scaling.
inline bool scalesLoss(Precision precision) { return precision == Precision::Fp16; }

}  // namespace balancenet::precision
