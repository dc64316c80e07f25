// The server's refusal of broken or outsized client updates.
#include "balancenet/federated/UpdateCheck.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "balancenet/core/Median.h"

namespace balancenet::federated {

double updateNorm(const at::Tensor& delta) {
  const auto d = delta.to(at::kDouble);
  if (!at::isfinite(d).all().item<bool>()) return std::nan("");
  return d.norm().item<double>();
}

std::optional<std::string> rejectionReason(const at::Tensor& delta, int64_t modelSize,
                                           const std::vector<double>& peerNorms, double maxNorm) {
  const int64_t values = delta.defined() ? delta.numel() : 0;
  if (values != modelSize) return fmt::format("{} values, the model has {}", values, modelSize);
  const auto d = delta.to(at::kDouble);
  const int64_t nans = at::isnan(d).sum().item<int64_t>();
  if (nans > 0) return fmt::format("{} NaN values", nans);
  const int64_t infinite = at::isinf(d).sum().item<int64_t>();
  if (infinite > 0) return fmt::format("{} infinite values", infinite);
  const double norm = d.norm().item<double>();
  if (maxNorm > 0) {
    if (norm > maxNorm) return fmt::format("norm {:.4g} > --max-update-norm {:.4g}", norm, maxNorm);
    return std::nullopt;
  }
  std::vector<double> finite;
  for (double n : peerNorms)
    if (std::isfinite(n)) finite.push_back(n);
  if (finite.size() < kMinPeersForMedian) return std::nullopt;
  const double m = median(finite);
  if (norm > kNormMedianFactor * m)
    return fmt::format("norm {:.4g} > {:g} x the median {:.4g} of the other updates", norm, kNormMedianFactor, m);
  return std::nullopt;
}

void rememberNorm(std::vector<double>& recent, double norm) {
  recent.push_back(norm);
  if (recent.size() > kRecentNorms) recent.erase(recent.begin());
}

std::vector<std::optional<std::string>> roundRejections(const std::vector<at::Tensor>& deltas, int64_t modelSize,
                                                        double maxNorm) {
  std::vector<double> norms;
  for (const auto& d : deltas) norms.push_back(d.defined() && d.numel() == modelSize ? updateNorm(d) : std::nan(""));
  std::vector<std::optional<std::string>> reasons;
  for (size_t i = 0; i < deltas.size(); ++i) {
    std::vector<double> others = norms;
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(i));
    reasons.push_back(rejectionReason(deltas[i], modelSize, others, maxNorm));
  }
  return reasons;
}

}  // namespace balancenet::federated
