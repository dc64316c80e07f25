// UpdateMessage: the fixed-size header (float64 slots) of every message between the federated server and a
// client; the model (float32, flat, its length known to both from the model) follows it on the channel.
#pragma once
#include <cstdint>

#include <ATen/core/Tensor.h>

namespace balancenet::federated {

enum class MessageKind { Task = 1, Stop = 2, Update = 3 };

// One header, server -> client (Task, Stop) or client -> server (Update). Unused fields are 0.
struct MessageHeader {
  MessageKind kind = MessageKind::Task;
  int64_t round = 0;          // the round (fedbuff: the server update) the task belongs to
  int64_t version = 0;        // the server's model version the weights are (the update's base version)
  int64_t localSteps = 0;     // assigned local steps
  int64_t batch = 0;          // Task: samples per local step
  double deadlineS = 0;       // Task: stop after this many seconds of local training (0: none)
  double mu = 0;              // Task: FedProx's proximal weight
  double lr = 0;              // Task: local SGD step size
  int64_t doneSteps = 0;      // Update: local steps done (< localSteps when it stopped at the deadline)
  int64_t samples = 0;        // Update: samples trained on
  double computeSeconds = 0;  // Update: local training time, paced
  bool stoppedEarly = false;  // Update: the deadline stopped it
  double momentum = 0;        // Task: local SGD momentum (--client-momentum; 0: plain SGD)
  // Federated evaluation (ClientEvaluation.h):
  bool evaluate = false;    // Task: evaluate the received model on the client's held-out data before training
  int64_t evalSamples = 0;  // Update: held-out samples evaluated (0: none)
  double evalAccuracy = 0;  // Update: their accuracy under the received model
  double evalLoss = 0;      // Update: their mean loss
};

constexpr int64_t kHeaderSlots = 18;

// float64 [kHeaderSlots]; slot 0 is a protocol mark so that a stray or mismatched message fails loudly.
at::Tensor encodeHeader(const MessageHeader& header);
// Throws RuntimeFailure for a tensor that is not a header of this protocol.
MessageHeader decodeHeader(const at::Tensor& slots);

}  // namespace balancenet::federated
