// A client's evaluation of the received global model on its held-out samples.
#include "balancenet/federated/process/ClientEvaluation.h"

#include "balancenet/trainer/Evaluator.h"

namespace balancenet::federated {

void evaluateForTask(const MessageHeader& task, models::Network& net, const std::optional<ClientShard>& heldOut,
                     const objective::Objective& objective, MessageHeader& reply) {
  reply.evalSamples = 0;
  reply.evalAccuracy = 0;
  reply.evalLoss = 0;
  if (!task.evaluate || !heldOut || heldOut->size() == 0) return;
  const auto point = trainer::countTestSamples(net, *heldOut->data, objective, 0, heldOut->size()).localPoint(0);
  reply.evalSamples = heldOut->size();
  reply.evalAccuracy = point.accuracy;
  reply.evalLoss = point.loss;
}

}  // namespace balancenet::federated
