// FactorCostModel: byte counts of the two ways and the per-layer choice.
#include "balancenet/comm/FactorCostModel.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "balancenet/comm/GradientSync.h"

namespace balancenet::comm {
namespace {

constexpr int64_t kFloat = 4;

int64_t factorRowBytes(const FcLayerShape& s) { return (s.out + s.in) * kFloat; }

}  // namespace

int64_t allReduceLayerBytes(const FcLayerShape& s, int worldSize) {
  const int64_t payload = (s.out * s.in + (s.bias ? s.out : 0)) * kFloat;
  return 2 * ringAllReduceWireBytes(payload, worldSize);
}

int64_t sfbSentBytes(const FcLayerShape& s, const std::vector<int64_t>& batches, int rank) {
  const auto peers = static_cast<int64_t>(batches.size()) - 1;
  return peers * batches.at(rank) * factorRowBytes(s);
}

int64_t sfbReceivedBytes(const FcLayerShape& s, const std::vector<int64_t>& batches, int rank) {
  int64_t rows = 0;
  for (size_t j = 0; j < batches.size(); ++j)
    if (static_cast<int>(j) != rank) rows += batches[j];
  return rows * factorRowBytes(s);
}

FcDecision decideFcLayer(const FcLayerShape& shape, const std::vector<int64_t>& batches) {
  FcDecision d;
  d.shape = shape;
  d.allReduceBytes = allReduceLayerBytes(shape, static_cast<int>(batches.size()));
  for (int i = 0; i < static_cast<int>(batches.size()); ++i) {
    const int64_t bytes = sfbSentBytes(shape, batches, i) + sfbReceivedBytes(shape, batches, i);
    if (bytes > d.sfbBytes) {
      d.sfbBytes = bytes;
      d.worstRank = i;
    }
  }
  d.sfb = d.sfbBytes < d.allReduceBytes;
  return d;
}

std::vector<FcDecision> decideFcLayers(const std::vector<FcLayerShape>& shapes, const std::vector<int64_t>& batches) {
  std::vector<FcDecision> out;
  for (const auto& s : shapes) out.push_back(decideFcLayer(s, batches));
  return out;
}

std::string decisionTable(const std::vector<FcDecision>& decisions, const std::vector<int64_t>& batches) {
  std::string out = fmt::format("  {:<12} {:>12} {:>16} {:>16} {:>16}  {}\n", "layer", "M x N", "per-worker K",
                                "allreduce B", "sfb B (worst)", "choice");
  const auto split = fmt::format("{}", fmt::join(batches, ","));
  for (const auto& d : decisions)
    out += fmt::format("  {:<12} {:>12} {:>16} {:>16} {:>16}  {}\n", d.shape.layer,
                       fmt::format("{}x{}", d.shape.out, d.shape.in), split, d.allReduceBytes, d.sfbBytes,
                       d.sfb ? "sfb" : "allreduce");
  return out;
}

}  // namespace balancenet::comm
