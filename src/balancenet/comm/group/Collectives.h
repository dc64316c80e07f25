// Collectives: the operations a sync strategy, the trainer and the orchestrator need of a group, and nothing of how
// it was formed. Communicator (Communicator.h) runs them over c10d; a test puts a fake world under a strategy
// (tests/testing/FakeCollectives.h) without any backend. Group formation, GPU groups, the store and the Python view
// stay with the Communicator, for the few places that make groups.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "balancenet/comm/Exchange.h"
#include "balancenet/comm/group/PendingWork.h"

namespace balancenet::comm {

// Collectives block unless named Async; a failure (peer died, timeout) surfaces as RuntimeFailure with a one-line
// message. Ranks may live in one process (threads, tests) or in many: nothing here is global.
class Collectives {
 public:
  virtual ~Collectives() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;

  virtual void allreduceSum(std::vector<at::Tensor>& tensors) = 0;  // in place
  void allreduceSum(at::Tensor& tensor);
  // The same sum of one contiguous float32 tensor by `exchange` (Exchange.h): Ring is the group's own; the others
  // run on a mesh connected (collectively) on first use: every rank must make its first such call at the same
  // point. Fewer dependent phases than the ring, the same bytes.
  virtual void allreduceSum(at::Tensor& tensor, Exchange exchange) = 0;
  // Starts a sum all-reduce and returns at once. Collectives must be started in the same order on every rank;
  // `tensor` must stay alive and untouched until wait().
  virtual PendingWork allreduceSumAsync(at::Tensor tensor) = 0;
  virtual void broadcast(std::vector<at::Tensor>& tensors, int root) = 0;  // in place
  // Every rank's tensor (same shape on all ranks), in rank order.
  virtual std::vector<at::Tensor> allgather(const at::Tensor& tensor) = 0;
  // Starts an all-gather and returns at once: outputs[r] (shaped like `input`) receives rank r's input.
  // `wireBytes` is what this rank really sends, for the emulated link: a payload padded to equal shapes
  // would overstate it. Same start-order rule and lifetime rule as allreduceSumAsync.
  virtual PendingWork allgatherAsync(at::Tensor input, std::vector<at::Tensor> outputs, int64_t wireBytes) = 0;
  // Starts an all-to-all of equal parts: `input` and `output` (same shape, first dimension the group's size) on
  // every rank; output[r] receives rank r's input[this rank]. `wireBytes` is what this rank really sends (for the
  // emulated link). Same start-order rule and lifetime rule as allreduceSumAsync.
  virtual PendingWork alltoallAsync(at::Tensor input, at::Tensor output, int64_t wireBytes) = 0;
  // Every rank's text (any length), in rank order: variable-size results gathered at the end of a run.
  std::vector<std::string> allgatherText(const std::string& text);
  virtual void barrier() = 0;
  // Point-to-point, blocking until done (recv: until the message arrived). Tensors must be contiguous
  // tensors of the same shape and dtype on both sides; `tag` pairs a send with its recv.
  void send(at::Tensor& t, int dst, int tag) { sendAsync(t, dst, tag).wait(); }
  void recv(at::Tensor& t, int src, int tag) { recvAsync(t, src, tag).wait(); }
  // The same, started and returned at once (a send completes once the peer has taken the message).
  virtual PendingWork sendAsync(at::Tensor t, int dst, int tag) = 0;
  virtual PendingWork recvAsync(at::Tensor t, int src, int tag) = 0;
  // Receives the next message with `tag` from whichever rank sends one first; returns that rank.
  virtual int recvFromAny(at::Tensor& t, int tag) = 0;

  // The group of the ranks `members` (this rank among them, its ranks indices into `members`), formed
  // (collectively, among the members only) on first use and kept by this group: strategies built more than once
  // over one group (--comm auto's candidates each offload) must not form one member set twice.
  virtual Collectives& keptSubgroup(const std::vector<int>& members) = 0;
  // Whether GPU tensors travel on a GPU group (NCCL) rather than through host copies.
  virtual bool hasGpuGroup() const { return false; }
};

}  // namespace balancenet::comm
