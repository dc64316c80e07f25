// Draw: the augmentation seed of a stream position.
#include "balancenet/data/Draw.h"

#include "balancenet/core/PortableRandom.h"

namespace balancenet::data {

uint64_t augmentSeed(uint64_t runSeed, int64_t epoch, int64_t index) {
  // splitmix64 over (seed, epoch, index) in turn: any change in one gives an unrelated seed.
  return splitmix64(splitmix64(runSeed ^ splitmix64(static_cast<uint64_t>(epoch))) ^ static_cast<uint64_t>(index));
}

}  // namespace balancenet::data
