// FakeCollectives: one rank's view of a world with no backend and no other process, to put under a sync strategy
// (or anything that takes comm::Collectives) in a unit test. Every operation completes at once; what the other
// ranks contribute to a sum comes from `othersSum` (default: each holds what this rank holds); the operations
// are recorded in order, so a test can check what a strategy sent as well as what it computed.
#pragma once
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "balancenet/comm/group/Collectives.h"

namespace balancenet::testing {

class FakeCollectives final : public comm::Collectives {
 public:
  // The other ranks' sum of a tensor this rank all-reduces (shaped and typed like it).
  using OthersSum = std::function<at::Tensor(const at::Tensor& mine)>;
  struct Call {
    std::string what;  // "allreduce", "halving-doubling", "all-to-all", "broadcast", "allgather", "alltoall", "send",
                       // "recv", ...
    int64_t numel = 0;
  };

  FakeCollectives(int rank, int size, OthersSum othersSum = {});

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  using Collectives::allreduceSum;
  void allreduceSum(std::vector<at::Tensor>& tensors) override;
  void allreduceSum(at::Tensor& tensor, comm::Exchange exchange) override;
  comm::PendingWork allreduceSumAsync(at::Tensor tensor) override;
  void broadcast(std::vector<at::Tensor>& tensors, int root) override;  // the others hold this rank's
  std::vector<at::Tensor> allgather(const at::Tensor& tensor) override;
  comm::PendingWork allgatherAsync(at::Tensor input, std::vector<at::Tensor> outputs, int64_t wireBytes) override;
  comm::PendingWork alltoallAsync(at::Tensor input, at::Tensor output, int64_t wireBytes) override;
  void barrier() override;
  // A loopback: a receive takes the oldest message sent with its tag, whatever the ranks (none: RuntimeFailure).
  comm::PendingWork sendAsync(at::Tensor t, int dst, int tag) override;
  comm::PendingWork recvAsync(at::Tensor t, int src, int tag) override;
  int recvFromAny(at::Tensor& t, int tag) override;
  // A fake of the members' size, with the same others' sum; kept, as the Communicator keeps its subgroups.
  FakeCollectives& keptSubgroup(const std::vector<int>& members) override;

  const std::vector<Call>& calls() const { return calls_; }

 private:
  void sumInPlace(at::Tensor& t, const std::string& what);

  int rank_, size_;
  OthersSum othersSum_;
  bool sameEverywhere_;  // the default sum: a subgroup's others hold this rank's tensors too
  std::vector<Call> calls_;
  std::map<int, std::deque<at::Tensor>> sent_;  // by tag
  std::map<std::vector<int>, std::unique_ptr<FakeCollectives>> subgroups_;
};

}  // namespace balancenet::testing
