// SimulateCommand: `balancenet simulate`: the real policies deciding for a simulated cluster of up to
// thousands of nodes, swept over N; a table, simulation.csv and efficiency.png.
#pragma once
#include <string>

#include "balancenet/simulate/ClusterSimulator.h"

namespace CLI {
class App;
}

namespace balancenet::cli {

struct SimulateFlags {
  std::string nodes = "8";  // one N: the sweep 8, 16, ... up to N; a list: exactly those
  std::string speeds = "const:1";
  std::string noise = "lognormal:1,0.05";
  std::string stepLaw = "5,0.5";  // fixed ms, ms per sample at speed 1
  std::string stragglers;         // "probability,factor"
  std::string changes;            // --change step:node:factor,...
  std::string policies = "equal,proportional,balanced,bno";
  std::string network = "ring:10gbit,5us";
  std::string out;            // directory for simulation.csv and efficiency.png; empty: none
  bool bnoNormalize = false;  // bno's sizes rescaled to sum to B, as `train --bno-normalize`
  simulate::SimulationOptions options;
};

// Declares the subcommand's flags on `app`, bound to `flags`.
void addSimulateFlags(CLI::App& app, SimulateFlags& flags);
// Runs the sweep, prints the table; returns the exit code. Throws UsageError for bad flags.
int runSimulate(SimulateFlags& flags);

}  // namespace balancenet::cli
