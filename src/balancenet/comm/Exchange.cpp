// Phase counts of the all-reduce algorithms.
#include "balancenet/comm/Exchange.h"

#include "balancenet/comm/GradientSync.h"

namespace balancenet::comm {

const char* exchangeName(Exchange exchange) {
  switch (exchange) {
    case Exchange::Ring:
      return "ring";
    case Exchange::HalvingDoubling:
      return "halving-doubling";
    case Exchange::AllToAll:
      return "all-to-all";
  }
  return "?";
}

std::vector<int> halvingDoublingGroups(int worldSize) {
  std::vector<int> groups;
  while (worldSize > 1 && worldSize % 2 == 0) {
    groups.push_back(2);
    worldSize /= 2;
  }
  if (worldSize > 1) groups.push_back(worldSize);
  return groups;
}

int64_t exchangePhases(Exchange exchange, int worldSize) {
  if (worldSize <= 1) return 0;
  switch (exchange) {
    case Exchange::Ring:
      return ringAllReducePhases(worldSize);
    case Exchange::HalvingDoubling:
      return 2 * static_cast<int64_t>(halvingDoublingGroups(worldSize).size());
    case Exchange::AllToAll:
      return 2;
  }
  return 0;
}

}  // namespace balancenet::comm
