// Communicator: the collectives balancenet uses, over a c10d process group (Gloo over TCP).
#pragma once
#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/util/intrusive_ptr.h>

namespace c10d {
class ProcessGroup;
class Store;
}  // namespace c10d

namespace balancenet::comm {

// Owns a process group (and the store it was formed over). Collectives block; a c10d failure
// (peer died, timeout) surfaces as RuntimeFailure with a one-line message.
// Ranks may live in one process (threads, tests) or in many: nothing here is global.
class Communicator {
 public:
  Communicator(c10::intrusive_ptr<c10d::Store> store, c10::intrusive_ptr<c10d::ProcessGroup> group);
  ~Communicator();

  int rank() const { return rank_; }
  int size() const { return size_; }

  void allreduceSum(std::vector<at::Tensor>& tensors);  // in place
  void allreduceSum(at::Tensor& tensor);
  void broadcast(std::vector<at::Tensor>& tensors, int root);  // in place
  // Every rank's tensor (same shape on all ranks), in rank order.
  std::vector<at::Tensor> allgather(const at::Tensor& tensor);
  void barrier();
  // Point-to-point, blocking until done (recv: until the message arrived). Tensors must be contiguous
  // CPU tensors of the same shape and dtype on both sides; `tag` pairs a send with its recv.
  void send(at::Tensor& t, int dst, int tag);
  void recv(at::Tensor& t, int src, int tag);

  c10d::Store& store() { return *store_; }
  const c10::intrusive_ptr<c10d::Store>& sharedStore() const { return store_; }

 private:
  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<c10d::ProcessGroup> group_;
  int rank_;
  int size_;
};

}  // namespace balancenet::comm
