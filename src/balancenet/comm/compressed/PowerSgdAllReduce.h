// PowerSgdAllReduce: PowerSGD over the group (compression/PowerSgd.h has the arithmetic). Two float32 all-reduces
// per buffer: the first carries the tensors that travel whole (vectors, small matrices) and every matrix's
// P = (M + e) Q, started from the backward hook; the second every matrix's Q' = (M + e)^T orth(sum P), run in
// finish(). Every rank's Q is the same (the summed Q' of the last step, or initialQ), so the sums are the summed
// gradient's own factors.
//
// Error feedback: each rank keeps e = (M + e) - orth(P) orth(P)^T (M + e), what the projection lost of its own
// share. The ranks' e sum to what the projection lost of the summed gradient, so the next step's summed input is
// the one process's: shares 12,4 train as one process running PowerSGD does (tested).
#pragma once
#include <vector>

#include "balancenet/comm/compressed/BufferAllReduce.h"
#include "balancenet/comm/group/Collectives.h"

namespace balancenet::comm {

class PowerSgdAllReduce : public BufferAllReduce {
 public:
  // A buffer without a matrix worth compressing at `rank` sends everything whole (checkCompressible refuses a
  // model where no buffer has one).
  // `errorFeedback` false: the residuals stay zero (--no-error-feedback); Q still warm-starts from the last step.
  PowerSgdAllReduce(Collectives& comm, int rank, const std::vector<BufferPart>& parts, const at::TensorOptions& device,
                    bool errorFeedback = true);
  void start(const at::Tensor& buffer) override;
  void finish(const at::Tensor& buffer, Timeline* timeline, const std::string& label) override;
  void abandon() override { work_.wait(); }
  int64_t wireBytes() const override;
  int64_t phases() const override;
  int64_t wireBytesOf(const std::vector<int64_t>& shape) const override;
  std::string describe() const override;
  // Each factored matrix's Q (the same on every rank) and residual (this rank's own).
  std::vector<at::Tensor> saveState() const override;
  void loadState(const std::vector<at::Tensor>& state) override;

 private:
  struct Matrix {
    int64_t offset = 0;  // in the buffer
    int64_t rows = 0, cols = 0;
    int64_t pOffset = 0;     // of its P in first_
    int64_t qOffset = 0;     // of its Q' in second_
    at::Tensor q;            // cols x r: the warm start, the same on every rank
    at::Tensor compensated;  // rows x cols: M + e of this step
    at::Tensor residual;     // rows x cols: e
  };
  struct Whole {
    int64_t offset = 0;  // in the buffer
    int64_t numel = 0;
    int64_t at = 0;  // in first_
  };

  Collectives& comm_;
  int rank_;
  bool errorFeedback_ = true;
  std::vector<Matrix> matrices_;
  std::vector<Whole> whole_;
  at::Tensor first_;   // the whole tensors, then every P
  at::Tensor second_;  // every Q'
  PendingWork work_;
};

}  // namespace balancenet::comm
