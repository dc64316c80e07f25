// The header codec: every field in its own float64 slot (integers up to 2^53 are exact).
#include "balancenet/federated/process/UpdateMessage.h"

#include <ATen/ATen.h>

#include <cmath>

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::federated {
namespace {

constexpr double kProtocolMark = 18.125;  // issue 18, format 2 (exact in binary): the task's batch

enum Slot : int64_t {
  kMark,
  kKind,
  kRound,
  kVersion,
  kLocalSteps,
  kDeadline,
  kMu,
  kLr,
  kDoneSteps,
  kSamples,
  kCompute,
  kStoppedEarly,
  kBatch,
  kMomentum,
  kEvaluate,
  kEvalSamples,
  kEvalAccuracy,
  kEvalLoss
};
static_assert(kEvalLoss + 1 == kHeaderSlots, "one slot per field");

}  // namespace

at::Tensor encodeHeader(const MessageHeader& h) {
  auto t = at::zeros({kHeaderSlots}, at::kDouble);
  auto* s = t.data_ptr<double>();
  s[kMark] = kProtocolMark;
  s[kKind] = static_cast<double>(h.kind);
  s[kRound] = static_cast<double>(h.round);
  s[kVersion] = static_cast<double>(h.version);
  s[kLocalSteps] = static_cast<double>(h.localSteps);
  s[kDeadline] = h.deadlineS;
  s[kMu] = h.mu;
  s[kLr] = h.lr;
  s[kDoneSteps] = static_cast<double>(h.doneSteps);
  s[kSamples] = static_cast<double>(h.samples);
  s[kCompute] = h.computeSeconds;
  s[kStoppedEarly] = h.stoppedEarly ? 1 : 0;
  s[kBatch] = static_cast<double>(h.batch);
  s[kMomentum] = h.momentum;
  s[kEvaluate] = h.evaluate ? 1 : 0;
  s[kEvalSamples] = static_cast<double>(h.evalSamples);
  s[kEvalAccuracy] = h.evalAccuracy;
  s[kEvalLoss] = h.evalLoss;
  return t;
}

MessageHeader decodeHeader(const at::Tensor& slots) {
  if (slots.scalar_type() != at::kDouble || slots.numel() != kHeaderSlots)
    throw RuntimeFailure(fmt::format("federated message header: expected {} float64 slots, got {} of {}", kHeaderSlots,
                                     slots.numel(), c10::toString(slots.scalar_type())));
  const auto t = slots.contiguous();
  const auto* s = t.data_ptr<double>();
  if (s[kMark] != kProtocolMark)
    throw RuntimeFailure(fmt::format("federated message header: protocol mark {} is not {}", s[kMark], kProtocolMark));
  const double kind = s[kKind];
  if (kind != static_cast<double>(MessageKind::Task) && kind != static_cast<double>(MessageKind::Stop) &&
      kind != static_cast<double>(MessageKind::Update))
    throw RuntimeFailure(fmt::format("federated message header: unknown kind {}", kind));
  auto count = [&](Slot slot) {
    if (s[slot] < 0 || s[slot] != std::floor(s[slot]))
      throw RuntimeFailure(fmt::format("federated message header: slot {} holds {}, not a count", int(slot), s[slot]));
    return static_cast<int64_t>(s[slot]);
  };
  MessageHeader h;
  h.kind = static_cast<MessageKind>(static_cast<int>(kind));
  h.round = count(kRound);
  h.version = count(kVersion);
  h.localSteps = count(kLocalSteps);
  h.deadlineS = s[kDeadline];
  h.mu = s[kMu];
  h.lr = s[kLr];
  h.doneSteps = count(kDoneSteps);
  h.samples = count(kSamples);
  h.computeSeconds = s[kCompute];
  h.stoppedEarly = s[kStoppedEarly] != 0;
  h.batch = count(kBatch);
  h.momentum = s[kMomentum];
  h.evaluate = s[kEvaluate] != 0;
  h.evalSamples = count(kEvalSamples);
  h.evalAccuracy = s[kEvalAccuracy];
  h.evalLoss = s[kEvalLoss];
  return h;
}

}  // namespace balancenet::federated
