// PsMessage: the one message format between workers and parameter servers (a header, then a shard).
#pragma once
#include <cstdint>

#include <ATen/core/Tensor.h>

namespace balancenet::ps {

// Tags of the worker <-> server messages; each pair of ranks has at most one of each in flight.
constexpr int kInitTag = 1;   // worker 0 -> server: the start parameters of the shard
constexpr int kPushTag = 2;   // worker -> server: its share of a step's gradient
constexpr int kReplyTag = 3;  // server -> worker: the shard's parameters for the worker's next step

constexpr int kMaxScalars = 4;

struct PsHeader {
  int64_t step = 0;          // push: the step computed; reply: the step the parameters are for
  double lr = 0;             // push: the step's learning rate
  int64_t slowestClock = 0;  // reply: steps the slowest worker had pushed when the reply left
  int64_t scalarCount = 0;
  float scalars[kMaxScalars] = {};  // push: this worker's; reply (BSP): summed over the workers
};

// A float32 buffer: the header's bytes, then `payloadElements` floats. Fixed size, so the receiver
// can post its buffer before the message exists.
class PsMessage {
 public:
  explicit PsMessage(int64_t payloadElements);
  at::Tensor& buffer() { return buffer_; }  // what goes on the wire
  at::Tensor payload() const;               // a view of the floats after the header
  PsHeader header() const;
  void setHeader(const PsHeader& header);
  int64_t bytes() const;

 private:
  at::Tensor buffer_;
};

}  // namespace balancenet::ps
