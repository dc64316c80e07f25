// GroupPrefixes: the prefixes of the groups that need a number in their name, and the scoped store.
#include "balancenet/comm/GroupPrefixes.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace balancenet::comm {

std::string attemptPrefix(int attempt) { return fmt::format("attempt/{}", attempt); }

std::string federatedChannelPrefix(int client, int64_t generation) {
  return fmt::format("fed/{}/{}", client, generation);
}

std::string elasticGenerationPrefix(int number) { return fmt::format("elastic/g{}/pg", number); }

std::string subgroupPrefix(const std::vector<int>& members) { return fmt::format("sub/{}", fmt::join(members, ",")); }

c10::intrusive_ptr<c10d::Store> scopedStore(const std::string& prefix, c10::intrusive_ptr<c10d::Store> store) {
  return c10::make_intrusive<c10d::PrefixStore>(prefix, std::move(store));
}

}  // namespace balancenet::comm
