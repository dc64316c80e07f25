// The mesh's two algorithms on c10d Backend operations (alltoall_base, send, recv): torch's wheel exports Gloo's
// symbols but ships none of its headers, and a second Gloo linked beside libtorch's would be two copies of one
// library in one process.
#include "balancenet/comm/group/MeshAllReduce.h"

#include <torch/csrc/distributed/c10d/Backend.hpp>

#include <algorithm>
#include <functional>

#include <ATen/ATen.h>

#include "balancenet/core/Error.h"

namespace balancenet::comm {
namespace {

at::Tensor floatsAt(float* data, int64_t count) { return at::from_blob(data, {count}, at::kFloat); }

}  // namespace

MeshAllReduce::MeshAllReduce(c10::intrusive_ptr<c10d::Backend> group)
    : group_(std::move(group)), rank_(group_->getRank()), size_(group_->getSize()) {}

MeshAllReduce::~MeshAllReduce() = default;

void MeshAllReduce::allreduceSum(float* data, int64_t count, Exchange exchange) {
  if (size_ == 1 || count == 0) return;
  if (exchange == Exchange::AllToAll) return allreduceByAllToAll(data, count);
  if (exchange == Exchange::Ring) throw RuntimeFailure("the ring all-reduce runs on the process group, not the mesh");
  allreduceByHalvingDoubling(data, count);
}

// Reduce-scatter by one all-to-all (rank r receives everyone's r-th chunk and sums it in rank order), then
// all-gather by another (each rank sends its summed chunk to all): two phases, each posting every send and
// receive before it waits, so a stalled peer is waited for at most twice.
void MeshAllReduce::allreduceByAllToAll(float* data, int64_t count) {
  const int64_t chunk = (count + size_ - 1) / size_;
  const int64_t padded = chunk * size_;
  buffer_.assign(data, data + count);
  buffer_.resize(padded, 0.0f);
  staging_.resize(padded);
  auto in = floatsAt(buffer_.data(), padded);
  auto out = floatsAt(staging_.data(), padded);
  std::vector<int64_t> equalSplits;  // empty: equal chunks
  group_->alltoall_base(out, in, equalSplits, equalSplits)->wait();
  // staging_[j * chunk + i] is rank j's element (rank * chunk + i): summed j = 0, 1, ... on every rank alike.
  float* mine = buffer_.data();
  std::copy(staging_.begin(), staging_.begin() + chunk, mine);
  for (int j = 1; j < size_; ++j) {
    const float* from = staging_.data() + j * chunk;
    for (int64_t i = 0; i < chunk; ++i) mine[i] += from[i];
  }
  for (int j = 1; j < size_; ++j) std::copy(mine, mine + chunk, buffer_.data() + j * chunk);
  group_->alltoall_base(out, in, equalSplits, equalSplits)->wait();
  // Now staging_[j * chunk + i] is rank j's summed chunk: the whole sum, in order.
  std::copy(staging_.begin(), staging_.begin() + count, data);
}

// Gloo's radix-2 bcube (halvingDoublingGroups): at step k the ranks that differ only in their k-th mixed-radix
// digit form a group of g_k; they hold the same segment, split it in g_k chunks, and the member with digit j
// receives everyone's chunk j and sums it in digit order (reduce-scatter). Then the steps in reverse, each
// member sending its chunk to the others (all-gather). 2 dependent phases per step.
void MeshAllReduce::allreduceByHalvingDoubling(float* data, int64_t count) {
  const auto groups = halvingDoublingGroups(size_);
  const int64_t padded = (count + size_ - 1) / size_ * size_;  // every segment splits evenly at every step
  buffer_.assign(data, data + count);
  buffer_.resize(padded, 0.0f);
  staging_.resize(padded);

  struct Step {
    int g, digit, stride;
    int64_t offset, length;  // the segment this rank's group holds at this step
  };
  std::vector<Step> steps;
  int stride = 1;
  int64_t offset = 0, length = padded;
  for (int g : groups) {
    const int digit = (rank_ / stride) % g;
    steps.push_back({g, digit, stride, offset, length});
    length /= g;
    offset += digit * length;
    stride *= g;
  }
  auto peer = [&](const Step& s, int j) { return rank_ + (j - s.digit) * s.stride; };
  // Posts every send and receive of one phase, then waits for them all; a distinct tag per phase.
  int tag = 0;
  auto exchange = [&](const Step& s, const std::function<float*(int)>& sendFrom,
                      const std::function<float*(int)>& recvInto, int64_t chunk) {
    std::vector<c10::intrusive_ptr<c10d::Work>> works;
    for (int j = 0; j < s.g; ++j) {
      if (j == s.digit) continue;
      std::vector<at::Tensor> out{floatsAt(sendFrom(j), chunk)};
      std::vector<at::Tensor> in{floatsAt(recvInto(j), chunk)};
      works.push_back(group_->send(out, peer(s, j), tag));
      works.push_back(group_->recv(in, peer(s, j), tag));
    }
    for (auto& w : works) w->wait();
    ++tag;
  };
  for (const auto& s : steps) {  // reduce-scatter
    const int64_t chunk = s.length / s.g;
    float* segment = buffer_.data() + s.offset;
    float* received = staging_.data() + s.offset;
    exchange(
        s, [&](int j) { return segment + j * chunk; }, [&](int j) { return received + j * chunk; }, chunk);
    float* mine = segment + s.digit * chunk;
    std::vector<float> sum(chunk, 0.0f);
    for (int j = 0; j < s.g; ++j) {
      const float* from = j == s.digit ? mine : received + j * chunk;
      if (j == 0)
        std::copy(from, from + chunk, sum.begin());
      else
        for (int64_t i = 0; i < chunk; ++i) sum[i] += from[i];
    }
    std::copy(sum.begin(), sum.end(), mine);
  }
  for (auto s = steps.rbegin(); s != steps.rend(); ++s) {  // all-gather
    const int64_t chunk = s->length / s->g;
    float* segment = buffer_.data() + s->offset;
    exchange(
        *s, [&](int) { return segment + s->digit * chunk; }, [&](int j) { return segment + j * chunk; }, chunk);
  }
  std::copy(buffer_.begin(), buffer_.begin() + count, data);
}

}  // namespace balancenet::comm
