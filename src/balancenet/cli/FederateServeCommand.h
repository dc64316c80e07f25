// FederateServeCommand: `balancenet federate serve`: one federated server process, no launcher: it serves the
// job's store on --port, admits clients that enrol over the network (`federate join`) and runs the rounds.
#pragma once
#include "balancenet/cli/FederateCommand.h"

namespace balancenet::cli {

struct ServeFlags {
  FederateFlags federate;
  std::string bind = "0.0.0.0";
  int port = 0;
  int minClients = 2;
  double joinTimeoutS = 600;
};

void addServeFlags(CLI::App& app, ServeFlags& flags);
// Every value checked (UsageError, one line naming the flag); the job token settled.
void validateServeFlags(ServeFlags& flags);
int runServe(ServeFlags& flags);

}  // namespace balancenet::cli
