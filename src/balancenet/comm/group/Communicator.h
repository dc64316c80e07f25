// Communicator: the collectives (Collectives.h) over a c10d Backend (Gloo over TCP; GlooGroup.h forms one, a test
// may pass a fake backend), and what only a formed group has: its store, subgroups and mesh formed over it, a GPU
// group beside it, an emulated link. c10d 2.x splits a ProcessGroup (what torch.distributed sees) from the Backend
// that runs the operations: balancenet calls the backend directly; ProcessGroupView.h wraps it for Python.
#pragma once
#include <map>
#include <memory>
#include <vector>

#include <c10/util/intrusive_ptr.h>

#include "balancenet/comm/group/Collectives.h"

namespace c10d {
class Backend;
class Store;
}  // namespace c10d

namespace balancenet::comm {
class MeshAllReduce;

// Forms a group (a c10d Backend) of `size` ranks over `store`, with the devices and timeout of the group that
// made it; how a Communicator makes subgroups and its mesh without knowing about network interfaces.
using GroupMaker =
    std::function<c10::intrusive_ptr<c10d::Backend>(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size)>;

// Owns a group (and the store it was formed over); c10d's failures become one-line RuntimeFailures.
class Communicator final : public Collectives {
 public:
  Communicator(c10::intrusive_ptr<c10d::Store> store, c10::intrusive_ptr<c10d::Backend> group,
               GroupMaker makeGroup = {});
  ~Communicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  using Collectives::allreduceSum;
  void allreduceSum(std::vector<at::Tensor>& tensors) override;
  void allreduceSum(at::Tensor& tensor, Exchange exchange) override;  // the others than Ring on this group's mesh
  PendingWork allreduceSumAsync(at::Tensor tensor) override;          // on Gloo's own threads
  void broadcast(std::vector<at::Tensor>& tensors, int root) override;
  std::vector<at::Tensor> allgather(const at::Tensor& tensor) override;
  PendingWork allgatherAsync(at::Tensor input, std::vector<at::Tensor> outputs, int64_t wireBytes) override;
  PendingWork alltoallAsync(at::Tensor input, at::Tensor output, int64_t wireBytes) override;
  void barrier() override;
  // A GPU tensor without a GPU group travels through a host copy (Gloo sends only CPU tensors).
  PendingWork sendAsync(at::Tensor t, int dst, int tag) override;
  PendingWork recvAsync(at::Tensor t, int src, int tag) override;
  int recvFromAny(at::Tensor& t, int tag) override;

  // Emulated link for every operation started from now on (null: none). Not thread-safe with
  // operations in flight: set it before training starts.
  void setLinkModel(std::shared_ptr<LinkModel> link) { link_ = std::move(link); }

  // A group of the ranks `members` (this rank among them) over this group's store under a key prefix
  // named after the members, with this group's emulated link; its ranks are indices into `members`, in
  // the order given. Collective among the members only (others do not call it); each member set at most once
  // per group (the store keys are the set's). Throws RuntimeFailure if this group cannot make groups.
  std::unique_ptr<Communicator> subgroup(const std::vector<int>& members);
  Communicator& keptSubgroup(const std::vector<int>& members) override;

  // Runs every collective of GPU tensors on `gpuGroup` (NCCL, over the same ranks) from now on; CPU tensors stay on
  // this group's Gloo. Without one, GPU tensors go through Gloo: c10d's Gloo copies them through pinned host memory
  // for all-reduce, all-gather and broadcast, and this class does for the rest (sends, the mesh's exchanges).
  // Set it before training starts, on every rank alike. The destructor ends it (Backend::abort).
  void attachGpuGroup(c10::intrusive_ptr<c10d::Backend> gpuGroup);
  bool hasGpuGroup() const override { return static_cast<bool>(gpuGroup_); }

  // The backends, for the Python view (ProcessGroupView.h); the GPU one is null without a GPU group.
  const c10::intrusive_ptr<c10d::Backend>& backend() const { return group_; }
  const c10::intrusive_ptr<c10d::Backend>& gpuBackend() const { return gpuGroup_; }
  c10d::Store& store() { return *store_; }
  const c10::intrusive_ptr<c10d::Store>& sharedStore() const { return store_; }

 private:
  LinkModel::Clock::time_point deliveredAt(int64_t wireBytes);
  // The backend a collective of `tensor` runs on: the GPU group for a GPU tensor where there is one.
  c10d::Backend& backendFor(const at::Tensor& tensor);
  // Whether point-to-point takes `t` as it is: a CPU tensor, or a GPU tensor where a GPU group carries it.
  bool sendsInPlace(const at::Tensor& t) const { return !t.is_cuda() || gpuGroup_; }

  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<c10d::Backend> group_;
  c10::intrusive_ptr<c10d::Backend> gpuGroup_;  // NCCL for GPU tensors; null: Gloo takes them too
  std::shared_ptr<LinkModel> link_;
  GroupMaker makeGroup_;
  int rank_;
  int size_;
  std::unique_ptr<MeshAllReduce> mesh_;  // its own group, connected on the first all-reduce that needs it
  std::map<std::vector<int>, std::unique_ptr<Communicator>> keptSubgroups_;
};

}  // namespace balancenet::comm
