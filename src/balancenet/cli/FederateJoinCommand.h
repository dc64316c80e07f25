// FederateJoinCommand: `balancenet federate join`: one federated client with its own data that enrols with a
// running `federate serve` over the network (see federated/process/JoinClient.h).
#pragma once
#include <string>

#include "balancenet/job/JobConfig.h"

namespace CLI {
class App;
}

namespace balancenet::cli {

struct JoinFlags {
  job::JobConfig config;  // --data and its flags, the job token, --threads, --iface, --log-level
  std::string tokenFile;
  std::string server;  // HOST:PORT
  std::string name;
  std::string model;
  double nodeSpeed = 0;  // 0: not given
  double slowdown = 0;
  std::string netDelayMs, netBandwidthMbps;  // one value each; "": none
  double rendezvousTimeoutS = 60;
};

void addJoinFlags(CLI::App& app, JoinFlags& flags);
int runJoin(JoinFlags& flags);

}  // namespace balancenet::cli
