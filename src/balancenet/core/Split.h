// Split: how many samples of one global batch each rank processes. The trainer receives one per step.
#pragma once
#include <cstdint>
#include <string>
#include <vector>
#include "balancenet/core/FieldList.h"

namespace balancenet {

struct Split {
  std::vector<int64_t> batches;  // batches[r]: samples of the global batch given to rank r

  int64_t total() const;
  int64_t offsetOf(int rank) const;  // first position of rank's slice within the global batch
  int worldSize() const { return static_cast<int>(batches.size()); }
  double share(int rank) const { return static_cast<double>(batches.at(rank)) / total(); }
  std::string str() const;  // "100,100,40,16"

  static Split equal(int64_t globalBatch, int worldSize);  // remainder goes to the first ranks
  // Parses "100,100,40,16"; throws UsageError if malformed, of the wrong length, non-positive
  // or not summing to the global batch.
  static Split parse(const std::string& text, int worldSize, int64_t globalBatch);
  // The invariant every split inside the program holds (worldSize entries, each >= 0 and at least one > 0, summing
  // to globalBatch: a worker left out of the exchange has 0, BalancedPolicy's leave-out); throws InternalError
  // otherwise: a split computed by the program that breaks it is a bug, not bad input (the user's --split is checked by
  // parse).
  void validate(int worldSize, int64_t globalBatch) const;

  // The fields a launcher sends its workers (core/FieldList.h): every one.
  BALANCENET_FIELDS(batches);
};
BALANCENET_CHECK_FIELDS(Split);

bool operator==(const Split& a, const Split& b);

}  // namespace balancenet
