// compare: runs the scenario once per (model, policy), then tables (text, CSV, JSON) and PNG charts.
#include "balancenet/cli/CompareCommand.h"

#include <iostream>
#include <map>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "balancenet/cli/CompareRuns.h"
#include "balancenet/cli/FederatedCompare.h"
#include "balancenet/core/AtomicFile.h"
#include "balancenet/core/Error.h"
#include "balancenet/report/Comparison.h"
#include "balancenet/report/GnuplotChart.h"
#include "balancenet/report/RunCharts.h"

namespace balancenet::cli {
namespace {

void drawCharts(const std::vector<report::ComparedRun>& runs, const std::string& outDir) {
  std::map<std::string, report::Chart> updateCharts;
  for (const auto& run : runs) {
    auto& chart = updateCharts[run.model];
    chart.title = fmt::format("{}: weight-update time (mean of each 10 updates)", run.model);
    chart.xLabel = "weight update";
    chart.yLabel = "ms (slowest worker)";
    chart.series.push_back({run.policy, report::movingBlocks(run.results.updateMsPerStep, 10)});

    const auto split = report::splitChart(
        run.results, fmt::format("{} / {}: samples per worker over training", run.model, run.policy));
    if (!split.series.empty())
      report::renderChart(split, fmt::format("{}/split_{}_{}.png", outDir, run.model, run.policy));
  }
  for (const auto& [model, chart] : updateCharts)
    report::renderChart(chart, fmt::format("{}/update_time_{}.png", outDir, model));
}

}  // namespace

double defaultCompareWidth(const std::string& model) {
  if (model == "alexnet" || model == "vgg16" || model == "resnet18") return 0.25;
  if (model == "resnet50") return 0.125;
  return 1.0;
}

void addCompareFlags(CLI::App& app, CompareOptions& o) {
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--policies", o.policies, "Policies to compare, comma separated")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--models", o.models, "Models to compare, comma separated")->delimiter(',')->capture_default_str();
  app.add_option("--steps", o.steps, "Weight updates per run (the paper: 2400)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--target-accuracy", o.targetAccuracy, "Test accuracy for the time-to-accuracy column")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--variant,--variants", o.variants,
                 "NAME=FLAGS: one more run per model and policy (or strategy) with these flags, e.g. "
                 "--variant 'overlap=--comm allreduce' --variant 'no-overlap=--no-overlap' (repeatable)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--out", o.outDir, "Directory for the runs, compare.csv/json (or .md) and the PNG charts");
  addFederatedCompareFlags(app, o);
  app.allow_extras();
  app.footer(
      "Any other flag (--workers, --node-speed, --slowdown, --global-batch, --width, ...) is passed to every "
      "'balancenet train' run (with --federate: to every 'balancenet federate' run; a '--' before them is "
      "allowed).\nExample: balancenet compare --models cnn --steps 200 --workers 4 "
      "--node-speed 100,100,100,25 --global-batch 128\n"
      "Federated: balancenet compare --federate --strategies fedavg,fednova,balanced "
      "--variant 'deadline=--deadline-s 5' -- --clients 8 --rounds 30 --alpha 0.1 "
      "--node-speed 100,100,50,50,25,25,12,12");
}

int runCompare(CompareOptions o, const std::string& self) {
  if (o.federate) return runFederatedCompare(o, self);
  if (!o.strategies.empty()) throw UsageError("--strategies needs --federate");
  if (o.outDir.empty()) o.outDir = defaultCompareOutDir();
  ensureDirectory(o.outDir);
  std::vector<report::ComparedRun> runs;
  const auto variants = parseVariants(o.variants);
  const size_t total = o.models.size() * o.policies.size() * variants.size();
  size_t done = 0;
  for (const auto& model : o.models) {
    for (const auto& policy : o.policies) {
      for (const auto& variant : variants) {
        const std::string label = runLabel(policy, variant, o.policies.size());
        const std::string dir = fmt::format("{}/{}/{}", o.outDir, model, label);
        ensureDirectory(dir);
        std::vector<std::string> args{"train",
                                      "--model",
                                      model,
                                      "--policy",
                                      policy,
                                      "--steps",
                                      std::to_string(o.steps),
                                      "--run-dir",
                                      dir,
                                      "--progress-seconds",
                                      "0"};
        if (!hasFlag(o.trainFlags, "--width"))
          args.insert(args.end(), {"--width", fmt::format("{}", defaultCompareWidth(model))});
        if (!hasFlag(o.trainFlags, "--eval-every"))
          args.insert(args.end(), {"--eval-every", std::to_string(std::max<int64_t>(1, o.steps / 10))});
        args.insert(args.end(), o.trainFlags.begin(), o.trainFlags.end());
        args.insert(args.end(), variant.flags.begin(), variant.flags.end());
        std::cerr << fmt::format("[{}/{}] {} / {} ...", ++done, total, model, label) << std::flush;
        runCompared(self, args, dir + "/train.log", fmt::format("{} / {}", model, label));
        runs.push_back({model, label, report::loadRun(dir)});
        std::cerr << fmt::format(" {:.1f} samples/s, mean weight update {:.1f} ms\n",
                                 runs.back().results.summary.value("samples_per_second", 0.0),
                                 runs.back().results.summary.value("mean_weight_update_ms", 0.0));
      }
    }
  }
  report::Comparison comparison(runs, o.targetAccuracy);
  std::cout << comparison.table() << std::flush;
  writeFileAtomically(o.outDir + "/compare.csv", comparison.csv());
  writeFileAtomically(o.outDir + "/compare.json", comparison.json().dump(2) + "\n");
  drawCharts(runs, o.outDir);
  std::cerr << "balancenet: compare results in " << o.outDir << " (compare.csv, compare.json, *.png)" << std::endl;
  return 0;
}

}  // namespace balancenet::cli
