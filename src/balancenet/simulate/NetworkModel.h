// NetworkModel: the time of the collectives a data-parallel step and a rebalance use, from bandwidth and
// latency (the alpha-beta model), for Gloo's ring and tree algorithms.
#pragma once
#include <string>

namespace balancenet::simulate {

struct NetworkModel {
  enum class Algorithm { Ring, Tree };
  Algorithm algorithm = Algorithm::Ring;
  double bytesPerMs = 1.25e6;  // 10 Gbit/s
  double latencyMs = 0.005;    // per message (alpha)

  // All-reduce of `bytes` over n ranks. Ring (Gloo's ring / bcube with one group): a reduce-scatter then an
  // all-gather, 2(n-1) steps each moving bytes/n: 2(n-1) alpha + 2(n-1)/n bytes beta. Tree (reduce to a
  // root, then broadcast): 2 ceil(log2 n) steps each moving all the bytes.
  double allreduceMs(int n, double bytes) const;
  // All-gather of one row of `rowBytes` per rank (Gloo's ring all-gather, what the Orchestrator uses):
  // (n-1) alpha + (n-1) rowBytes beta, and every rank receives all n rows.
  double allgatherMs(int n, double rowBytes) const;
  // A gather to rank 0 over a binomial tree (what only the master needs): ceil(log2 n) alpha + (n-1) rowBytes beta.
  double treeGatherMs(int n, double rowBytes) const;
  // Broadcast from rank 0 over a binomial tree: ceil(log2 n) (alpha + bytes beta).
  double broadcastMs(int n, double bytes) const;

  // "ring:10gbit,5us", "tree:1gbit,50us": algorithm, bandwidth (bit, kbit, mbit, gbit per second), latency
  // (ns, us, ms, s). Throws UsageError naming --network for anything else.
  static NetworkModel parse(const std::string& text);
};

}  // namespace balancenet::simulate
