// LabelPartition: each client's shard of the training set, by a seeded Dirichlet(alpha) split of each
// label over the clients (the standard non-IID benchmark split of FedAvg/FedNova papers).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace balancenet::federated {

// Shard c holds the dataset indices of client c, ascending. Every index in [0, labels.size()) is in
// exactly one shard; the result is a function of (labels, clients, alpha, seed) only, identical on every
// platform (core/PortableRandom.h). alpha = kIid: a uniform random split into equal-as-possible shards.
// Every shard holds at least one sample (a client with none would have nothing to train on).
// Throws UsageError for clients < 1, alpha <= 0, or more clients than samples.
std::vector<std::vector<int64_t>> dirichletShards(const std::vector<int64_t>& labels, int clients, double alpha,
                                                  uint64_t seed, int64_t numClasses);

// counts[c][k]: how many samples of label k shard c holds.
std::vector<std::vector<int64_t>> labelCounts(const std::vector<std::vector<int64_t>>& shards,
                                              const std::vector<int64_t>& labels, int64_t numClasses);

// partition.csv (client,samples,label_0,...,label_{K-1}; with names, client,name,samples,...), written atomically.
void writePartitionCsv(const std::string& path, const std::vector<std::vector<int64_t>>& counts,
                       const std::vector<std::string>& names = {});

// "iid" -> kIid, else a positive number; UsageError naming --alpha otherwise.
double parseAlpha(const std::string& text);

}  // namespace balancenet::federated
