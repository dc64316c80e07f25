// ExactAllReduce and CastAllReduce: the ring all-reduce of the buffer as it is (float32), or of its cast to bf16 or
// fp16 with error feedback (compression/ErrorFeedback.h). The sum of casts is summed in the wire type by c10d.
#pragma once
#include "balancenet/comm/compressed/BufferAllReduce.h"
#include "balancenet/comm/group/Collectives.h"
#include "balancenet/compression/ErrorFeedback.h"

namespace balancenet::comm {

class ExactAllReduce : public BufferAllReduce {
 public:
  ExactAllReduce(Collectives& comm, int64_t numel) : comm_(comm), numel_(numel) {}
  void start(const at::Tensor& buffer) override;
  void finish(const at::Tensor& buffer, Timeline* timeline, const std::string& label) override;
  void abandon() override { work_.wait(); }
  int64_t wireBytes() const override;
  int64_t phases() const override;
  int64_t wireBytesOf(const std::vector<int64_t>& shape) const override;
  std::string describe() const override { return "float32"; }

 private:
  Collectives& comm_;
  int64_t numel_;
  PendingWork work_;
};

class CastAllReduce : public BufferAllReduce {
 public:
  CastAllReduce(Collectives& comm, compression::GradCompression cast, int64_t numel, bool errorFeedback = true);
  void start(const at::Tensor& buffer) override;
  void finish(const at::Tensor& buffer, Timeline* timeline, const std::string& label) override;
  void abandon() override { work_.wait(); }
  int64_t wireBytes() const override;
  int64_t phases() const override;
  int64_t wireBytesOf(const std::vector<int64_t>& shape) const override;
  std::string describe() const override;
  std::vector<at::Tensor> saveState() const override;
  void loadState(const std::vector<at::Tensor>& state) override;

 private:
  Collectives& comm_;
  compression::GradCompression cast_;
  int64_t numel_;
  compression::ErrorFeedback feedback_;
  bool errorFeedback_ = true;
  at::Tensor wire_;  // the cast, summed in place
  PendingWork work_;
};

}  // namespace balancenet::comm
