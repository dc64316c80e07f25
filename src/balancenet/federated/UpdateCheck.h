// UpdateCheck: which client updates the server refuses before any strategy sees them: non-finite values, the
// wrong number of values, or a norm far beyond the others' (a broken or poisoned client). Pure.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

namespace balancenet::federated {

// Without --max-update-norm: an update whose L2 norm exceeds this many times the median norm of the others
// is refused, when there are at least kMinPeersForMedian others (fewer: no norm limit).
constexpr double kNormMedianFactor = 10;
constexpr size_t kMinPeersForMedian = 3;

// The L2 norm of an update, NaN for one with a non-finite value.
double updateNorm(const at::Tensor& delta);

// Why `delta` is refused ("17 NaN values", "5 values, the model has 7", "norm 812 > 10 x the median 3.1 of the
// round's other updates"), or nothing. maxNorm > 0: the limit itself; 0: kNormMedianFactor x the median of
// `peerNorms` (the other updates' norms; non-finite ones are ignored).
std::optional<std::string> rejectionReason(const at::Tensor& delta, int64_t modelSize,
                                           const std::vector<double>& peerNorms, double maxNorm);

// Keeps the newest kRecentNorms norms in `recent` (an asynchronous server's peers for rejectionReason).
constexpr size_t kRecentNorms = 16;
void rememberNorm(std::vector<double>& recent, double norm);

// rejectionReason for each of a round's updates, each against the norms of the others.
std::vector<std::optional<std::string>> roundRejections(const std::vector<at::Tensor>& deltas, int64_t modelSize,
                                                        double maxNorm);

}  // namespace balancenet::federated
