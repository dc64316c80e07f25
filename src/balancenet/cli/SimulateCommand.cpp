// SimulateCommand: flags -> SimulationOptions, the sweep over N and policies, the outputs.
#include "balancenet/cli/SimulateCommand.h"

#include <cmath>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "balancenet/cli/flags/AllocationFlags.h"
#include "balancenet/core/Error.h"
#include "balancenet/core/ParseNumber.h"
#include "balancenet/orchestrator/policies/PolicyRegistry.h"
#include "balancenet/simulate/SimulationReport.h"

namespace balancenet::cli {
namespace {

constexpr int kSweepStart = 8;

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) items.push_back(item);
  return items;
}

double number(const std::string& text, const std::string& flag) {
  const auto v = parseFiniteNumber(text);
  if (!v) throw UsageError(fmt::format("{}: '{}' is not a number", flag, text));
  return *v;
}

// "4096": 8, 16, ..., 4096 (and N itself when not a power of two); "8,64,512": exactly those.
std::vector<int> nodeCounts(const std::string& text) {
  std::vector<int> counts;
  for (const auto& item : splitList(text)) {
    const double v = number(item, "--nodes");
    if (v < 1 || v != std::floor(v) || v > 1e6)
      throw UsageError(fmt::format("--nodes: '{}' is not a count in [1, 1e6]", item));
    counts.push_back(static_cast<int>(v));
  }
  if (counts.empty()) throw UsageError("--nodes needs a count");
  if (counts.size() > 1) return counts;
  const int last = counts[0];
  counts.clear();
  for (int n = std::min(kSweepStart, last); n < last; n *= 2) counts.push_back(n);
  counts.push_back(last);
  return counts;
}

void applyFlags(SimulateFlags& f) {
  auto& o = f.options;
  o.speeds = simulate::Distribution::parse(f.speeds, "--speeds");
  o.law.noise = simulate::Distribution::parse(f.noise, "--noise");
  const auto law = splitList(f.stepLaw);
  if (law.size() != 2) throw UsageError(fmt::format("--step-law '{}': expected fixed_ms,ms_per_sample", f.stepLaw));
  o.law.fixedMs = number(law[0], "--step-law");
  o.law.perSampleMs = number(law[1], "--step-law");
  if (!f.stragglers.empty()) {
    const auto s = splitList(f.stragglers);
    if (s.size() != 2) throw UsageError(fmt::format("--stragglers '{}': expected probability,factor", f.stragglers));
    o.law.stragglerProbability = number(s[0], "--stragglers");
    o.law.stragglerFactor = number(s[1], "--stragglers");
    if (o.law.stragglerProbability < 0 || o.law.stragglerProbability > 1 || o.law.stragglerFactor < 1)
      throw UsageError("--stragglers: probability in [0, 1] and factor >= 1");
  }
  if (!f.changes.empty()) o.law.changes = simulate::StepLawOptions::parseChanges(f.changes);
  if (o.law.drift < 0) throw UsageError("--drift must be >= 0");
  o.network = simulate::NetworkModel::parse(f.network);
  if (o.rebalanceBudget < 0 || o.rebalanceBudget > 1) throw UsageError("--rebalance-budget must be in [0, 1]");
}

}  // namespace

void addSimulateFlags(CLI::App& app, SimulateFlags& f) {
  auto& o = f.options;
  app.add_option("--nodes", f.nodes, "N (sweep 8, 16, ... up to N) or a list of N")->capture_default_str();
  addGlobalBatchFlag(app, o.globalBatch, "B, the same at every N");
  app.add_option("--steps", o.steps, "Steps per run")->capture_default_str();
  app.add_option("--speeds", f.speeds, "Node speed law: const:x, uniform:lo,hi, normal:m,sd, lognormal:median,sigma")
      ->capture_default_str();
  app.add_option("--noise", f.noise, "Per-step multiplicative noise law")->capture_default_str();
  app.add_option("--step-law", f.stepLaw, "fixed_ms,ms_per_sample of a step at speed 1")->capture_default_str();
  app.add_option("--stragglers", f.stragglers, "probability,factor: a node-step is this many times slower");
  app.add_option("--drift", o.law.drift, "Sigma of each node's log-speed random walk per step")->capture_default_str();
  app.add_option("--change", f.changes, "Sudden speed changes: step:node:factor[,...]");
  app.add_option("--policies", f.policies, "Policies to compare")->capture_default_str();
  app.add_option("--network", f.network, "ring|tree:<bandwidth>,<latency>")->capture_default_str();
  app.add_option("--gradient-bytes", o.gradientBytes, "Bytes all-reduced per step")->capture_default_str();
  app.add_option("--rebalance-every", o.rebalanceEvery, "Steps between decisions")->capture_default_str();
  app.add_option("--rebalance-budget", o.rebalanceBudget,
                 "Double the period while a rebalance costs more than this share of the steps between two; 0: fixed")
      ->capture_default_str();
  app.add_option("--probe-peers", o.probePeers, "Latencies to k peers per node; 0: all pairs")->capture_default_str();
  app.add_option("--seed", o.seed, "Seed of every draw")->capture_default_str();
  addBnoNormalizeFlag(app, f.bnoNormalize);
  app.add_option("--out", f.out, "Directory for simulation.csv and efficiency.png");
}

int runSimulate(SimulateFlags& f) {
  applyFlags(f);
  const auto counts = nodeCounts(f.nodes);
  std::vector<orchestrator::PolicyOptions> policies;
  for (const auto& name : splitList(f.policies)) {
    orchestrator::PolicyOptions p;
    p.name = name;
    p.seed = f.options.seed;
    p.bnoNormalize = f.bnoNormalize;
    orchestrator::makePolicy(p);  // an unknown name fails before any run
    policies.push_back(p);
  }
  std::vector<simulate::SimulationResult> results;
  for (int n : counts) {
    for (const auto& p : policies) {
      auto o = f.options;
      o.nodes = n;
      auto policy = orchestrator::makePolicy(p);
      results.push_back(simulate::simulateCluster(*policy, o));
    }
  }
  std::cout << simulate::resultsTable(results) << std::flush;
  if (!f.out.empty()) {
    simulate::writeSimulationReport(f.out, results);
    std::cerr << "balancenet: simulation.csv written to " << f.out << std::endl;
  }
  return 0;
}

}  // namespace balancenet::cli
