// Communicator: the collectives balancenet uses, over a c10d Backend (Gloo over TCP; GlooGroup.h forms one, a test
// may pass a fake). c10d 2.x splits a ProcessGroup (what torch.distributed sees) from the Backend that runs the
// operations: balancenet calls the backend directly and wraps it in a ProcessGroup only for the Python package.
#pragma once
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/util/intrusive_ptr.h>

#include "balancenet/comm/Exchange.h"
#include "balancenet/comm/LinkModel.h"

namespace balancenet {
class Timeline;
}
namespace c10d {
class Backend;
class ProcessGroup;
class Store;
class Work;
}  // namespace c10d

namespace balancenet::comm {
class MeshAllReduce;

// A collective in flight. wait() returns once it is done everywhere (and, under an emulated link,
// once the link would have delivered it); a c10d failure surfaces there as RuntimeFailure.
class PendingWork {
 public:
  PendingWork();
  // `hasFuture`: the work supports getFuture() (Gloo's collectives do; its send and recv do not, and
  // asking them throws a c10::Error whose symbolised backtrace costs milliseconds). Without one, the
  // operation's end is taken as when wait() returned.
  PendingWork(c10::intrusive_ptr<c10d::Work> work, LinkModel::Clock::time_point deliveredAt, std::string what, int rank,
              bool hasFuture = true);
  PendingWork(PendingWork&&) noexcept;
  PendingWork& operator=(PendingWork&&) noexcept;
  ~PendingWork();
  bool valid() const;
  void wait();
  // wait(), drawn on `timeline` (when not null): the wait as `waitName` on the compute lane, and the
  // operation itself, from its start to its delivery, as `messageName` on the communication lane.
  void wait(Timeline* timeline, const std::string& waitName, const std::string& messageName);
  // Runs `done` once wait() has returned (a receive through a host copy copies it into its GPU tensor there).
  void thenOnWait(std::function<void()> done) { onWait_ = std::move(done); }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
  std::shared_ptr<std::atomic<int64_t>> completedNs_;  // set by the work's completion callback
  LinkModel::Clock::time_point startedAt_;
  LinkModel::Clock::time_point deliveredAt_;
  LinkModel::Clock::time_point finishedAt_;  // after wait(): really finished, emulated link included
  std::string what_;
  int rank_ = 0;
  std::function<void()> onWait_;
};

// Forms a group (a c10d Backend) of `size` ranks over `store`, with the devices and timeout of the group that
// made it; how a Communicator makes subgroups and its mesh without knowing about network interfaces.
using GroupMaker =
    std::function<c10::intrusive_ptr<c10d::Backend>(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size)>;

// Owns a group (and the store it was formed over). Collectives block; a c10d failure
// (peer died, timeout) surfaces as RuntimeFailure with a one-line message.
// Ranks may live in one process (threads, tests) or in many: nothing here is global.
class Communicator {
 public:
  Communicator(c10::intrusive_ptr<c10d::Store> store, c10::intrusive_ptr<c10d::Backend> group,
               GroupMaker makeGroup = {});
  ~Communicator();

  int rank() const { return rank_; }
  int size() const { return size_; }

  void allreduceSum(std::vector<at::Tensor>& tensors);  // in place
  void allreduceSum(at::Tensor& tensor);
  // The same sum of one contiguous float32 tensor by `exchange`: Ring is the process group's; the others run
  // on this group's own Gloo mesh, connected (collectively) on first use: every rank must make its first such
  // call at the same point. Fewer dependent phases than the ring (Exchange.h), the same bytes.
  void allreduceSum(at::Tensor& tensor, Exchange exchange);
  // Starts a sum all-reduce and returns at once (Gloo runs it on its own threads). Collectives must be
  // started in the same order on every rank; `tensor` must stay alive and untouched until wait().
  PendingWork allreduceSumAsync(at::Tensor tensor);
  void broadcast(std::vector<at::Tensor>& tensors, int root);  // in place
  // Every rank's tensor (same shape on all ranks), in rank order.
  std::vector<at::Tensor> allgather(const at::Tensor& tensor);
  // Starts an all-gather and returns at once: outputs[r] (shaped like `input`) receives rank r's input.
  // `wireBytes` is what this rank really sends, for the emulated link: a payload padded to equal shapes
  // would overstate it. Same start-order rule and lifetime rule as allreduceSumAsync.
  PendingWork allgatherAsync(at::Tensor input, std::vector<at::Tensor> outputs, int64_t wireBytes);
  // Starts an all-to-all of equal parts: `input` and `output` (same shape, first dimension the group's size) on
  // every rank; output[r] receives rank r's input[this rank]. `wireBytes` is what this rank really sends (for the
  // emulated link). Same start-order rule and lifetime rule as allreduceSumAsync.
  PendingWork alltoallAsync(at::Tensor input, at::Tensor output, int64_t wireBytes);
  // Every rank's text (any length), in rank order: variable-size results gathered at the end of a run.
  std::vector<std::string> allgatherText(const std::string& text);
  void barrier();
  // Point-to-point, blocking until done (recv: until the message arrived). Tensors must be contiguous
  // tensors of the same shape and dtype on both sides; `tag` pairs a send with its recv. A GPU tensor without a
  // GPU group travels through a host copy (Gloo sends only CPU tensors), the async forms' too.
  void send(at::Tensor& t, int dst, int tag);
  void recv(at::Tensor& t, int src, int tag);
  // The same, started and returned at once (a send completes once the peer has taken the message).
  PendingWork sendAsync(at::Tensor t, int dst, int tag);
  PendingWork recvAsync(at::Tensor t, int src, int tag);
  // Receives the next message with `tag` from whichever rank sends one first; returns that rank.
  int recvFromAny(at::Tensor& t, int tag);

  // Emulated link for every operation started from now on (null: none). Not thread-safe with
  // operations in flight: set it before training starts.
  void setLinkModel(std::shared_ptr<LinkModel> link) { link_ = std::move(link); }

  // A group of the ranks `members` (this rank among them) over this group's store under a key prefix
  // named after the members, with this group's emulated link; its ranks are indices into `members`, in
  // the order given. Collective among the members only (others do not call it); each member set at most once
  // per group (the store keys are the set's). Throws RuntimeFailure if this group cannot make groups.
  std::unique_ptr<Communicator> subgroup(const std::vector<int>& members);
  // The same subgroup, formed on first use and kept by this group: for strategies that are built more than once
  // over one group (--comm auto's candidates each offload) and so must not form one member set twice.
  Communicator& keptSubgroup(const std::vector<int>& members);

  // Runs every collective of GPU tensors on `gpuGroup` (NCCL, over the same ranks) from now on; CPU tensors stay on
  // this group's Gloo. Without one, GPU tensors go through Gloo: c10d's Gloo copies them through pinned host memory
  // for all-reduce, all-gather and broadcast, and this class does for the rest (sends, the mesh's exchanges).
  // Set it before training starts, on every rank alike. The destructor ends it (Backend::abort).
  void attachGpuGroup(c10::intrusive_ptr<c10d::Backend> gpuGroup);
  bool hasGpuGroup() const { return static_cast<bool>(gpuGroup_); }

  // The group as torch.distributed sees it (a ProcessGroup over this backend), for the Python package.
  c10::intrusive_ptr<c10d::ProcessGroup> processGroup() const;
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
