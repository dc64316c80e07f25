// NetworkModel: alpha-beta costs of ring and tree collectives; parsing "ring:10gbit,5us".
#include "balancenet/simulate/NetworkModel.h"

#include <cmath>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/ParseNumber.h"

namespace balancenet::simulate {
namespace {

double log2Steps(int n) { return n > 1 ? std::ceil(std::log2(static_cast<double>(n))) : 0.0; }

// "10gbit" -> 10 x 1e9 with units {"gbit", 1e9}, ...; throws `error` when no unit matches or the number is bad.
double withUnit(const std::string& text, const std::vector<std::pair<std::string, double>>& units,
                const UsageError& error) {
  for (const auto& [unit, scale] : units) {
    if (text.size() <= unit.size() || text.compare(text.size() - unit.size(), unit.size(), unit) != 0) continue;
    const auto v = parseFiniteNumber(text.substr(0, text.size() - unit.size()));
    if (!v || *v < 0) throw error;
    return *v * scale;
  }
  throw error;
}

}  // namespace

double NetworkModel::allreduceMs(int n, double bytes) const {
  if (n <= 1) return 0;
  if (algorithm == Algorithm::Tree) return 2 * log2Steps(n) * (latencyMs + bytes / bytesPerMs);
  return 2.0 * (n - 1) * latencyMs + 2.0 * (n - 1) / n * bytes / bytesPerMs;
}

double NetworkModel::allgatherMs(int n, double rowBytes) const {
  if (n <= 1) return 0;
  return (n - 1) * (latencyMs + rowBytes / bytesPerMs);
}

double NetworkModel::treeGatherMs(int n, double rowBytes) const {
  if (n <= 1) return 0;
  return log2Steps(n) * latencyMs + (n - 1) * rowBytes / bytesPerMs;
}

double NetworkModel::broadcastMs(int n, double bytes) const { return log2Steps(n) * (latencyMs + bytes / bytesPerMs); }

NetworkModel NetworkModel::parse(const std::string& text) {
  const UsageError error(
      fmt::format("--network '{}': expected ring|tree:<bandwidth>,<latency>, e.g. ring:10gbit,5us (bit/kbit/mbit/gbit; "
                  "ns/us/ms/s)",
                  text));
  const auto colon = text.find(':');
  const auto comma = text.find(',');
  if (colon == std::string::npos || comma == std::string::npos || comma < colon) throw error;
  NetworkModel m;
  const std::string algorithm = text.substr(0, colon);
  if (algorithm == "ring") {
    m.algorithm = Algorithm::Ring;
  } else if (algorithm == "tree") {
    m.algorithm = Algorithm::Tree;
  } else {
    throw error;
  }
  const double bitsPerSecond = withUnit(text.substr(colon + 1, comma - colon - 1),
                                        {{"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1}}, error);
  if (bitsPerSecond <= 0) throw error;
  m.bytesPerMs = bitsPerSecond / 8 / 1000;
  m.latencyMs = withUnit(text.substr(comma + 1), {{"ns", 1e-6}, {"us", 1e-3}, {"ms", 1}, {"s", 1e3}}, error);
  return m;
}

}  // namespace balancenet::simulate
