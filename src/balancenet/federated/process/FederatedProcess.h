// FederatedProcess: what the federated server and clients are given by the launcher (parsed and validated
// there): the options, the model, the data, where results go, and how to reach each other.
#pragma once
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "balancenet/checkpoint/CheckpointOptions.h"
#include "balancenet/data/DataOptions.h"
#include "balancenet/emulation/FactorSchedule.h"
#include "balancenet/emulation/Pacing.h"
#include "balancenet/federated/FederatedOptions.h"
#include "balancenet/federated/process/ClientChannel.h"
#include "balancenet/models/ModelZoo.h"
#include "balancenet/objective/ObjectiveOptions.h"

namespace balancenet::federated {

struct ProcessSettings {
  FederatedOptions options;
  models::ModelOptions model;
  data::DataOptions data;
  objective::ObjectiveOptions objective;
  ChannelOptions channel;
  // Clients: --node-speed (Paced) or --slowdown (Relative), one value per client, by round; none: full speed.
  std::optional<emulation::PaceMode> paceMode;
  emulation::FactorSchedule pace;
  // Clients: --net-delay-ms, --net-bandwidth-mbps, one value per client (see ClientLink.h); empty: none.
  std::vector<double> netDelayMs, netBandwidthMbps;
  // Server only.
  std::string runDir;
  std::string saveParams;
  checkpoint::CheckpointOptions checkpoint;      // every: rounds between checkpoints; an empty dir: no checkpoints
  std::chrono::milliseconds peerTimeout{30000};  // a task with a deadline: the server gives up this long after it
  std::chrono::milliseconds joinTimeout{60000};  // the clients' first arrival
  double progressSeconds = 10;
  std::string settingsJson = "{}";  // the run's settings, merged into summary.json
};

}  // namespace balancenet::federated
