// FactorCostModel: per fully connected layer, full-gradient all-reduce or sufficient factors, from bytes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace balancenet::comm {

// A fully connected layer: weight [out (M), in (N)], optionally a bias [M].
struct FcLayerShape {
  std::string layer;  // "layers.9"
  int64_t out = 0;
  int64_t in = 0;
  bool bias = true;
};

// Bytes (float32) one rank moves for one layer in one step, sent + received.
// All-reduce: the ring sends and receives 2(P-1)/P of the payload (M*N + M) each way, on every rank.
int64_t allReduceLayerBytes(const FcLayerShape& shape, int worldSize);
// SFB, rank i: its K_i factor rows (M+N floats each) to each of the P-1 peers ...
int64_t sfbSentBytes(const FcLayerShape& shape, const std::vector<int64_t>& batches, int rank);
// ... and every peer's rows once: sum over j != i of K_j (M+N). The bias needs nothing more (sum of u).
int64_t sfbReceivedBytes(const FcLayerShape& shape, const std::vector<int64_t>& batches, int rank);

struct FcDecision {
  FcLayerShape shape;
  int64_t allReduceBytes = 0;  // per rank, sent + received
  int64_t sfbBytes = 0;        // of the worst rank, sent + received
  int worstRank = 0;           // the rank SFB costs most
  bool sfb = false;
};

// Poseidon's choice with unequal batches (batches[j] = K_j, P = batches.size()): SFB when its worst rank
// moves fewer bytes than any rank moves with all-reduce; ties go to all-reduce (fewer, larger messages).
FcDecision decideFcLayer(const FcLayerShape& shape, const std::vector<int64_t>& batches);
std::vector<FcDecision> decideFcLayers(const std::vector<FcLayerShape>& shapes, const std::vector<int64_t>& batches);

// The --explain-comm table: layer, M x N, per-node K, both byte counts and the choice, one line per layer.
std::string decisionTable(const std::vector<FcDecision>& decisions, const std::vector<int64_t>& batches);

}  // namespace balancenet::comm
