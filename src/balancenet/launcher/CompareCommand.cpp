// compare: runs the scenario once per (model, policy), then tables (text, CSV, JSON) and PNG charts.
#include "balancenet/launcher/CompareCommand.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "balancenet/core/AtomicFile.h"
#include "balancenet/core/Error.h"
#include "balancenet/report/Comparison.h"
#include "balancenet/report/GnuplotChart.h"
#include "balancenet/report/RunCharts.h"

namespace balancenet::launcher {
namespace {

// Runs this program with `args`, output to `logPath`; returns its exit code (128 + signal if killed).
int runSelf(const std::string& self, const std::vector<std::string>& args, const std::string& logPath) {
  std::vector<std::string> all{self};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int log = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log < 0) throw RuntimeFailure(fmt::format("cannot write {}", logPath));
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(log);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

bool hasFlag(const std::vector<std::string>& flags, const std::string& name) {
  for (const auto& f : flags)
    if (f == name || f.rfind(name + "=", 0) == 0) return true;
  return false;
}

std::string lastLine(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

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

struct Variant {
  std::string name;
  std::vector<std::string> flags;
};

std::vector<Variant> parseVariants(const std::vector<std::string>& specs) {
  if (specs.empty()) return {{"", {}}};
  std::vector<Variant> out;
  for (const auto& spec : specs) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError(fmt::format("--variant '{}' is not NAME=FLAGS (e.g. 'ssp=--comm ps --staleness 2')", spec));
    Variant v{spec.substr(0, eq), {}};
    std::istringstream words(spec.substr(eq + 1));
    for (std::string w; words >> w;) v.flags.push_back(w);
    out.push_back(v);
  }
  return out;
}

std::string runLabel(const std::string& policy, const Variant& variant, size_t policies) {
  if (variant.name.empty()) return policy;
  return policies == 1 ? variant.name : policy + "-" + variant.name;
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
  app.add_option("--variant", o.variants,
                 "NAME=FLAGS: one more run per model and policy with these train flags, e.g. "
                 "--variant 'overlap=--comm allreduce' --variant 'no-overlap=--no-overlap' (repeatable)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--out", o.outDir, "Directory for the runs, compare.csv/json and the PNG charts");
  app.allow_extras();
  app.footer(
      "Any other flag (--workers, --node-speed, --slowdown, --global-batch, --width, ...) is passed to every "
      "'balancenet train' run.\nExample: balancenet compare --models cnn --steps 200 --workers 4 "
      "--node-speed 100,100,100,25 --global-batch 128");
}

int runCompare(CompareOptions o, const std::string& self) {
  if (o.outDir.empty()) {
    char stamp[32];
    std::time_t now = std::time(nullptr);
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
    o.outDir = fmt::format("runs/compare-{}", stamp);
  }
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
        const int rc = runSelf(self, args, dir + "/train.log");
        if (rc != 0) {
          std::cerr << "\n";
          throw RuntimeFailure(fmt::format("{} / {} failed (exit {}): {} (log: {}/train.log)", model, label, rc,
                                           lastLine(dir + "/train.log"), dir));
        }
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

}  // namespace balancenet::launcher
