// Int8AllReduce: a compressed all-reduce in two 8-bit phases (the shape of DeepSpeed's 1-bit compressed all-reduce):
//   1. the buffer, cut into one chunk per rank, each chunk as int8 codes with its own scale, all-to-all: rank j
//      receives every rank's chunk j;
//   2. rank j sums its chunks in float32 in rank order, quantises the sum again and all-gathers it.
// Each rank sends 2 (P-1)/P bytes per gradient against float32's ring 8 (P-1)/P: a quarter at any group size.
// Both quantisations keep their error: each rank its own chunks' (worker feedback), rank j its sum's (server
// feedback), so over steps what was lost comes back. Every rank decodes the same bytes the same way: the result is
// bit-identical everywhere.
#pragma once
#include <vector>

#include "balancenet/comm/compressed/BufferAllReduce.h"
#include "balancenet/comm/group/Collectives.h"

namespace balancenet::comm {

class Int8AllReduce : public BufferAllReduce {
 public:
  // `errorFeedback` false: both residuals stay zero (--no-error-feedback).
  Int8AllReduce(Collectives& comm, int64_t numel, const at::TensorOptions& device, bool errorFeedback = true);
  void start(const at::Tensor& buffer) override;
  void finish(const at::Tensor& buffer, Timeline* timeline, const std::string& label) override;
  void abandon() override { work_.wait(); }
  int64_t wireBytes() const override;
  int64_t phases() const override;
  int64_t wireBytesOf(const std::vector<int64_t>& shape) const override;
  std::string describe() const override {
    return errorFeedback_ ? "int8 with a scale per chunk, error feedback on both phases"
                          : "int8 with a scale per chunk, without error feedback";
  }
  std::vector<at::Tensor> saveState() const override { return {residual_, serverResidual_}; }
  void loadState(const std::vector<at::Tensor>& state) override {
    residual_.copy_(state.at(0));
    serverResidual_.copy_(state.at(1));
  }

 private:
  // Row r: chunk r's codes, then its scale's four bytes (rows a multiple of 4 long, so the scale is aligned).
  at::Tensor codesOf(const at::Tensor& rows, int64_t r) const { return rows[r].narrow(0, 0, chunk_); }
  at::Tensor scaleOf(const at::Tensor& rows, int64_t r) const { return rows[r].narrow(0, chunk_, 4).view(at::kFloat); }

  Collectives& comm_;
  int64_t numel_;
  bool errorFeedback_ = true;
  int64_t chunk_;                     // values per chunk, a multiple of 4
  at::Tensor padded_;                 // float32, size() * chunk_: the buffer, zero-padded
  at::Tensor residual_;               // float32, size() * chunk_: this rank's worker feedback
  at::Tensor serverResidual_;         // float32, chunk_: the feedback of the chunk this rank sums
  at::Tensor send_, receive_;         // int8, size() x (chunk_ + 4)
  at::Tensor sum_, decoded_;          // float32, chunk_
  at::Tensor own_;                    // int8, chunk_ + 4: the summed chunk, re-quantised
  std::vector<at::Tensor> gathered_;  // every rank's own_
  PendingWork work_;
};

}  // namespace balancenet::comm
