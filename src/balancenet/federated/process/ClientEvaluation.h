// ClientEvaluation: a client's part of federated evaluation: the received global model on its held-out
// samples, before it trains, reported in its update's header. Every client task loop (launched or joined)
// calls it between receiving a task and training on it.
#pragma once
#include <optional>

#include "balancenet/federated/process/LocalTraining.h"
#include "balancenet/federated/process/UpdateMessage.h"
#include "balancenet/models/Network.h"
#include "balancenet/objective/Objective.h"

namespace balancenet::federated {

// When `task.evaluate` and the client has held-out samples: `net` (holding the task's weights) evaluated on
// them as the server evaluates its test set (eval mode, no gradients), into reply.evalSamples, evalAccuracy and
// evalLoss. Otherwise the reply's evaluation slots stay 0. Draws no random numbers, so the training after it
// is the same with and without it.
void evaluateForTask(const MessageHeader& task, models::Network& net, const std::optional<ClientShard>& heldOut,
                     const objective::Objective& objective, MessageHeader& reply);

}  // namespace balancenet::federated
