// StepLaw: the per-node step-time law and the schedule of speed changes.
#include "balancenet/simulate/StepLaw.h"

#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/PortableRandom.h"

namespace balancenet::simulate {

std::vector<SpeedChange> StepLawOptions::parseChanges(const std::string& text) {
  std::vector<SpeedChange> changes;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    SpeedChange c;
    char colon1 = 0, colon2 = 0;
    std::stringstream fields(item);
    if (!(fields >> c.step >> colon1 >> c.node >> colon2 >> c.factor) || colon1 != ':' || colon2 != ':' ||
        !fields.eof() || c.step < 0 || c.node < 0 || !(c.factor > 0) || !std::isfinite(c.factor))
      throw UsageError(
          fmt::format("--change '{}': expected step:node:factor[,...], e.g. 100:3:0.125 (factor > 0)", item));
    changes.push_back(c);
  }
  return changes;
}

ClusterLaw::ClusterLaw(std::vector<double> speeds, StepLawOptions options, uint64_t seed)
    : speeds_(std::move(speeds)),
      options_(std::move(options)),
      gen_(seededGenerator(seed, 0x5713)),
      expectedFactor_(options_.noise.mean() * (1 + options_.stragglerProbability * (options_.stragglerFactor - 1))) {
  for (const auto& c : options_.changes)
    if (c.node >= size())
      throw UsageError(fmt::format("--change names node {}, but the cluster has {} nodes", c.node, size()));
}

void ClusterLaw::advance(int64_t step) {
  if (options_.drift > 0)
    for (double& s : speeds_) s *= std::exp(options_.drift * standardNormal(gen_));
  for (const auto& c : options_.changes)
    if (c.step == step) speeds_[c.node] *= c.factor;
}

double ClusterLaw::stepMs(int node, int64_t batch) {
  double factor = std::max(0.0, options_.noise.draw(gen_));
  if (options_.stragglerProbability > 0 && uniform01(gen_) < options_.stragglerProbability)
    factor *= options_.stragglerFactor;
  return (options_.fixedMs + options_.perSampleMs * static_cast<double>(batch)) / speeds_[node] * factor;
}

double ClusterLaw::expectedFixedMs(int node) const { return options_.fixedMs / speeds_[node] * expectedFactor_; }

double ClusterLaw::expectedPerSampleMs(int node) const {
  return options_.perSampleMs / speeds_[node] * expectedFactor_;
}

}  // namespace balancenet::simulate
