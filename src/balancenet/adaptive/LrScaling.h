// LrScaling: the rule by which the learning rate follows the global batch B away from the batch it was tuned for.
#pragma once
#include <cstdint>
#include <string>

namespace balancenet::adaptive {

// --lr-scaling. None: the lr stays; Linear: x B/B0 (Goyal et al.); Sqrt: x sqrt(B/B0) (what Adam-like
// optimizers tolerate); AdaScale: x the gain r of AdaScale (Johnson et al., ICML'20), which follows the
// noise scale: linear while the gradient is mostly noise, 1 once it is mostly signal.
enum class LrScaling { None, Linear, Sqrt, AdaScale };

// "auto", "none", "linear", "sqrt", "adascale". auto: adascale for sgd, sqrt for adam and adamw (the names
// of trainer/OptimizerFactory.cpp). Throws UsageError (one line naming the valid values) otherwise.
LrScaling parseLrScaling(const std::string& text, const std::string& optimizer);
std::string lrScalingName(LrScaling rule);

// The factor the base lr (tuned at baseBatch) is multiplied by at `batch`. AdaScale with the noise scale
// unknown (< 0) is 1: no step grows the lr blind. Throws InternalError unless both batches are positive.
double lrFactor(LrScaling rule, int64_t baseBatch, int64_t batch, double noiseScale);

}  // namespace balancenet::adaptive
