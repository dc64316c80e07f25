// ClientSampling: which clients a round takes and how many local steps each runs. Every draw is a function
// of (seed, round, client) alone (no generator carried between rounds), so a resumed run configures the
// same rounds as an uninterrupted one.
#pragma once
#include <cstdint>
#include <vector>

#include "balancenet/federated/FederatedOptions.h"
#include "balancenet/federated/Strategy.h"

namespace balancenet::federated {

// The ids of the clients marked available, ascending.
std::vector<int> availableClients(const RoundContext& context);

// --fraction f: max(1, round(f x available)) of the available clients, drawn without replacement for
// context.round; ascending. None when none is available.
std::vector<int> sampleClients(const RoundContext& context, double fraction, uint64_t seed);

// --local-steps: N, or uniform in [LO, HI] drawn for (round, client).
int64_t drawLocalSteps(const LocalSteps& steps, uint64_t seed, int64_t round, int client);

// A task for each of `clients` with its drawn local steps, options.deadlineS and `mu`.
std::vector<ClientTask> drawnStepTasks(const std::vector<int>& clients, int64_t round, const FederatedOptions& options,
                                       double mu);

}  // namespace balancenet::federated
