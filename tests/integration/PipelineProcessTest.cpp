// Pipeline parallelism through the binary: real worker processes over loopback, one per stage and replica.
// A pipelined run learns what one process learns on the whole batch and writes the pipeline's run
// directory (steps.csv per stage, summary.json, pipeline.csv), its export and its report; a model that data
// parallelism cannot fit under --memory-limit-mb trains with stages; a dead or stalled stage stops the job
// with one line in bounded time.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/serialize.h>
#include <nlohmann/json.hpp>

#include "BinaryFixture.h"
#include "CsvRows.h"
#include "balancenet/report/RunResults.h"
#include "testing/FloatBound.h"
#include "testing/ReferenceTraining.h"
#include "testing/SyntheticData.h"

namespace balancenet::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kSteps = 3;
constexpr int kMicroBatches = 4;

// What --export wrote: the state_dict, by name.
std::map<std::string, at::Tensor> readExport(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::map<std::string, at::Tensor> state;
  for (const auto& entry : torch::pickle_load(bytes).toGenericDict())
    state[entry.key().toStringRef()] = entry.value().toTensor();
  return state;
}

// A run of the comparable job: one process (nodes 1) or a pipeline of `nodes` workers in `stages` stages.
struct Layout {
  std::string name;
  int nodes;
  int stages;
  std::string schedule;  // empty for one process
  std::string optimizer;
};
void PrintTo(const Layout& l, std::ostream* os) { *os << l.name; }  // gtest and ctest name it, not its bytes

// cnn without dropout (and without BatchNorm): any cut of it is exactly comparable with one process.
std::vector<std::string> job(const std::string& optimizer, int steps = kSteps,
                             const std::string& progressSeconds = "0") {
  std::vector<std::string> flags{"--model",
                                 "cnn",
                                 "--width",
                                 "0.25",
                                 "--dropout",
                                 "0",
                                 "--global-batch",
                                 "64",
                                 "--steps",
                                 std::to_string(steps),
                                 "--seed",
                                 "7",
                                 "--optimizer",
                                 optimizer,
                                 "--progress-seconds",
                                 progressSeconds};
  if (optimizer == "sgd")
    flags.insert(flags.end(), {"--lr", "0.05", "--momentum", "0.9", "--weight-decay", "5e-4"});
  else
    flags.insert(flags.end(), {"--lr", "0.002"});
  return flags;
}

std::vector<std::string> pipelined(std::vector<std::string> flags, int nodes, int stages, const std::string& schedule) {
  flags.insert(flags.end(), {"--nodes", std::to_string(nodes), "--pipeline-stages", std::to_string(stages),
                             "--micro-batches", std::to_string(kMicroBatches), "--schedule", schedule});
  // Two pipelines: unequal shares, each still cut into kMicroBatches micro-batches.
  if (nodes / stages == 2) flags.insert(flags.end(), {"--split", "13,51"});
  return flags;
}

// Training is what takes the time: each run is trained once per test process, on first use, and checked by
// several tests. Run `name` has its directory `name`, its parameters `name`.params and its export `name`.pt.
class SharedRuns {
 public:
  static SharedRuns& instance() {
    static SharedRuns runs;
    return runs;
  }
  const ProcessResult& trained(const Layout& l) {
    auto it = results_.find(l.name);
    if (it != results_.end()) return it->second;
    auto flags = l.schedule.empty() ? job(l.optimizer) : pipelined(job(l.optimizer), l.nodes, l.stages, l.schedule);
    if (l.schedule.empty()) flags.insert(flags.end(), {"--nodes", "1"});
    flags.insert(flags.end(), {"--save-params", file(l.name + ".params"), "--export", file(l.name + ".pt")});
    ProcessOptions o;
    o.timeoutSeconds = 120;
    return results_[l.name] = runProcess(trainCommand(dataDir_, file(l.name), flags), o);
  }
  std::string file(const std::string& name) const { return dir_.file(name); }

 private:
  SharedRuns() : dataDir_(dir_.file("data")) {
    fs::create_directories(dataDir_);
    writeSyntheticMnistDir(dataDir_, 512, 128);
  }
  TempDir dir_;
  std::string dataDir_;
  std::map<std::string, ProcessResult> results_;
};

Layout oneProcess(const std::string& optimizer) { return {"one_" + optimizer, 1, 1, "", optimizer}; }

// Trains `l` unless it was; false, with a failure naming it, when it did not train.
bool trained(const Layout& l) {
  const auto& r = SharedRuns::instance().trained(l);
  EXPECT_EQ(r.exitCode, 0) << l.name << ":\n" << r.output;
  return r.exitCode == 0;
}

// Two replicas of two stages with unequal shares and four stages; gpipe and 1f1b each with SGD (momentum,
// weight decay) and Adam. (Each pipelined run costs ~3 s, mostly starting 4 workers: the file keeps < 40 s.)
const std::vector<Layout> kPipelines{{"gpipe_sgd", 4, 2, "gpipe", "sgd"},
                                     {"s4_1f1b_sgd", 4, 4, "1f1b", "sgd"},
                                     {"gpipe_adam", 4, 2, "gpipe", "adam"},
                                     {"1f1b_adam", 4, 2, "1f1b", "adam"}};

// A file of run `l`, and of the one-process run with its optimiser.
std::string runFile(const Layout& l, const std::string& name) { return SharedRuns::instance().file(l.name + name); }
std::string oneProcessFile(const Layout& l, const std::string& name) { return runFile(oneProcess(l.optimizer), name); }

// The parameters after the steps are those of one process training the whole model on the whole batch.
void expectSameParametersAsOneProcess(const Layout& l) {
  const auto one = loadSavedParameters(oneProcessFile(l, ".params"));
  const double diff = maxAbsDifference(loadSavedParameters(runFile(l, ".params")), one);
  const double bound = exactnessBound(one, kSteps);
  std::printf("%s vs 1 process: max |param difference| = %.3g (float bound %.3g)\n", l.name.c_str(), diff, bound);
  EXPECT_LT(diff, bound);
}

// steps.csv has one row per step and rank with its stage and micro-batches; summary.json the pipeline's shape,
// bubble and memory; pipeline.csv every rank's actions of the last step, held as the schedule promises.
void expectPipelineRunDirectory(const Layout& l) {
  const auto steps = readCsvRows(runFile(l, "/steps.csv"));
  EXPECT_EQ(steps.size(), static_cast<size_t>(kSteps * l.nodes));
  std::set<int> stagesSeen;
  for (const auto& row : steps) {
    for (const char* column : {"stage", "micro_batches", "bubble_ms", "send_ms", "recv_ms"})
      ASSERT_TRUE(row.count(column)) << column << " missing from steps.csv";
    const int stage = std::stoi(row.at("stage"));
    EXPECT_EQ(stage, std::stoi(row.at("rank")) % l.stages);  // rank = replica * stages + stage
    stagesSeen.insert(stage);
    EXPECT_EQ(std::stoi(row.at("micro_batches")), kMicroBatches);
    for (const char* column : {"bubble_ms", "send_ms", "recv_ms"}) EXPECT_GE(std::stod(row.at(column)), 0) << column;
  }
  std::set<int> allStages;
  for (int s = 0; s < l.stages; ++s) allStages.insert(s);
  EXPECT_EQ(stagesSeen, allStages);

  const auto summary = nlohmann::json::parse(readFile(runFile(l, "/summary.json")));
  const double bubble = summary.at("bubble_fraction").get<double>();
  EXPECT_GE(bubble, 0);
  EXPECT_LE(bubble, 1);
  EXPECT_NEAR(summary.at("analytical_bubble").get<double>(), (l.stages - 1.0) / (kMicroBatches + l.stages - 1.0), 1e-9);
  EXPECT_EQ(summary.at("activation_peak_mb").size(), static_cast<size_t>(l.nodes));
  EXPECT_EQ(summary.at("peak_memory_mb").size(), static_cast<size_t>(l.nodes));
  EXPECT_EQ(summary.at("pipeline").at("schedule"), l.schedule);
  EXPECT_EQ(summary.at("pipeline").at("stages"), l.stages);
  EXPECT_EQ(summary.at("pipeline").at("replicas"), l.nodes / l.stages);

  // Every rank ran F and B of every micro-batch in the last step; in start order, gpipe holds all M
  // micro-batches at once, 1f1b at most S - s at stage s.
  std::map<int, std::vector<CsvRow>> lastStep;  // by rank
  for (const auto& row : readCsvRows(runFile(l, "/pipeline.csv")))
    if (std::stoi(row.at("step")) == kSteps - 1) lastStep[std::stoi(row.at("rank"))].push_back(row);
  ASSERT_EQ(static_cast<int>(lastStep.size()), l.nodes) << readFile(runFile(l, "/pipeline.csv"));
  std::set<std::string> everyAction;
  for (int m = 0; m < kMicroBatches; ++m) everyAction.insert({"F" + std::to_string(m), "B" + std::to_string(m)});
  for (auto& [rank, actions] : lastStep) {
    std::set<std::string> done;
    for (const auto& a : actions) done.insert(a.at("kind") + a.at("micro"));
    EXPECT_EQ(done, everyAction) << "rank " << rank;
    EXPECT_EQ(actions.size(), everyAction.size()) << "rank " << rank;
    std::stable_sort(actions.begin(), actions.end(), [](const CsvRow& a, const CsvRow& b) {
      return std::stod(a.at("start_ms")) < std::stod(b.at("start_ms"));
    });
    int inFlight = 0, peak = 0;
    for (const auto& a : actions) peak = std::max(peak, inFlight += a.at("kind") == "F" ? 1 : -1);
    const int stage = rank % l.stages;
    EXPECT_EQ(peak, l.schedule == "gpipe" ? kMicroBatches : std::min(l.stages - stage, kMicroBatches))
        << "rank " << rank;
  }
}

// --export gathers every stage's tensors: the state_dict equals the one-process run's, name by name.
void expectSameExportAsOneProcess(const Layout& l) {
  const auto expected = readExport(oneProcessFile(l, ".pt"));
  const auto exported = readExport(runFile(l, ".pt"));
  ASSERT_FALSE(expected.empty());
  ASSERT_EQ(exported.size(), expected.size());
  std::vector<at::Tensor> expectedTensors;
  for (const auto& entry : expected) expectedTensors.push_back(entry.second);
  const double bound = exactnessBound(expectedTensors, kSteps);
  for (const auto& [name, tensor] : expected) {
    ASSERT_TRUE(exported.count(name)) << name;
    ASSERT_EQ(exported.at(name).sizes(), tensor.sizes()) << name;
    EXPECT_LT((exported.at(name) - tensor).abs().max().item<double>(), bound) << name;
  }
}

class PipelineRun : public ::testing::TestWithParam<Layout> {};

TEST_P(PipelineRun, MatchesOneProcessAndWritesItsRunDirectoryAndExport) {
  const auto& l = GetParam();
  ASSERT_TRUE(trained(l));
  ASSERT_TRUE(trained(oneProcess(l.optimizer)));
  expectSameParametersAsOneProcess(l);
  expectPipelineRunDirectory(l);
  expectSameExportAsOneProcess(l);
}

INSTANTIATE_TEST_SUITE_P(Layouts, PipelineRun, ::testing::ValuesIn(kPipelines),
                         [](const auto& info) { return info.param.name; });

// `balancenet report` on a pipelined run: the page has the schedule's section, the picture stays in the run.
TEST(PipelineReport, ShowsThePipelineSchedule) {
  const auto& l = kPipelines.back();
  ASSERT_EQ(l.schedule, "1f1b");
  ASSERT_TRUE(trained(l));
  const auto& runs = SharedRuns::instance();
  const auto page = runs.file("report.html");
  ProcessOptions o;
  o.timeoutSeconds = 60;
  const auto rep = runProcess({BALANCENET_BINARY, "report", runs.file(l.name), "--out", page}, o);
  ASSERT_EQ(rep.exitCode, 0) << rep.output;
  const auto html = readFile(page);
  EXPECT_NE(html.find("<h2>Pipeline schedule</h2>"), std::string::npos);
  if (!fs::exists("/usr/bin/gnuplot")) GTEST_SKIP() << "gnuplot is not installed: no pipeline picture to check";
  EXPECT_GT(fs::file_size(runs.file(l.name + "/pipeline.png")), 0u);
  EXPECT_NE(html.find("pipeline schedule\" src=\"data:image/png;base64,"), std::string::npos);
}

class PipelineProcess : public BinaryFixture {};

// A model whose data-parallel placement exceeds the memory cap is refused before any worker starts, naming
// the limit; the same job cut into 4 stages fits and trains. (vgg16 at width 0.25: the estimate for data
// parallelism is 33 MiB a worker, for 4 stages at most 14; at width 1, 304 MiB and 58, but 4x slower here.)
TEST_F(PipelineProcess, ModelTooBigForDataParallelismTrainsInFourStages) {
  const std::vector<std::string> flags{
      "--model",           "vgg16", "--width", "0.25", "--global-batch", "64", "--optimizer",        "adam",
      "--memory-limit-mb", "20",    "--nodes", "4",    "--steps",        "1",  "--progress-seconds", "0"};
  auto dp = flags;
  dp.insert(dp.end(), {"--pipeline-stages", "1"});
  ProcessOptions o;
  o.timeoutSeconds = 120;
  const auto refused = train(dp, o);
  expectOneLineError(refused, "the whole model", 2);
  EXPECT_NE(refused.output.find("--memory-limit-mb 20"), std::string::npos) << refused.output;

  auto pp = flags;
  pp.insert(pp.end(), {"--pipeline-stages", "4"});
  const auto r = train(pp, o);
  EXPECT_EQ(r.exitCode, 0) << r.output;
}

// Issue 56: the replicas of a stage summed by the ring whatever --comm said. --comm a2a's exchange is the one
// they run (--explain-comm says so, steps.csv's comm_phases are its 2 at 3 replicas, where the ring has 4),
// and --comm allreduce, whose buckets would overlap a backward the micro-batches split, is refused in one line.
TEST_F(PipelineProcess, StageReplicasSumByTheCommAlgorithm) {
  const std::vector<std::string> flags{
      "--model", "mlp", "--global-batch",     "24", "--nodes",        "6", "--pipeline-stages", "2",
      "--steps", "2",   "--progress-seconds", "0",  "--eval-samples", "0"};
  ProcessOptions o;
  o.timeoutSeconds = 120;
  auto a2a = flags;
  a2a.insert(a2a.end(), {"--comm", "a2a", "--explain-comm"});
  const auto r = train(a2a, o);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("replicas of each stage: every parameter: one all-to-all all-reduce"), std::string::npos)
      << r.output;
  const auto rows = readCsvRows(dir_.file("run/steps.csv"));
  ASSERT_EQ(rows.size(), 2u * 6u);
  for (const auto& row : rows) EXPECT_EQ(row.at("comm_phases"), "2") << "rank " << row.at("rank");

  auto allreduce = flags;
  allreduce.insert(allreduce.end(), {"--comm", "allreduce"});
  expectOneLineError(train(allreduce, o), "--comm allreduce (its buckets overlap backward", 2);
}

// A stage that dies or stalls mid-run: the job ends with one error line naming it, in bounded time, leaving
// no worker behind. A killed worker is seen by the launcher at once; a stopped one only through its
// neighbour, whose receive (or all-reduce) must time out after --stall-timeout instead of waiting for ever,
// and then the launcher gives the stopped one 6 s to go before naming it (LocalLauncher's settleFailure).
class DeadStage : public PipelineProcess, public ::testing::WithParamInterface<int> {};

TEST_P(DeadStage, StopsTheJobWithOneLineInBoundedTime) {
  const int stopSignal = GetParam();
  constexpr double kStallTimeoutS = 3;
  auto flags = pipelined(job("sgd", 100000, "0.2"), 2, 2, "1f1b");
  flags.insert(flags.end(), {"--stall-timeout", fmt::format("{}", kStallTimeoutS)});
  std::set<pid_t> workers;
  pid_t victim = -1;
  double signalledAt = 0;
  bool training = false;
  ProcessOptions o;
  o.timeoutSeconds = 120;
  o.onOutput = [&](const std::string& output, double) {
    training = training || output.find("[rank 0] [info] step ") != std::string::npos;
  };
  o.whileRunning = [&](pid_t launcher, double elapsed) {
    auto children = childrenOf(launcher);
    workers.insert(children.begin(), children.end());
    if (victim == -1 && training && children.size() == 2) {
      victim = *std::max_element(children.begin(), children.end());  // started last: rank 1, the last stage
      signalledAt = elapsed;
      ::kill(victim, stopSignal);
    }
  };
  const auto r = train(flags, o);
  ASSERT_NE(victim, -1) << "training never started:\n" << r.output;
  const double ending = r.seconds - signalledAt;
  std::printf("a stage %s: the job ended %.1f s later\n", stopSignal == SIGKILL ? "killed" : "stopped", ending);
  if (stopSignal == SIGKILL) {
    expectOneLineError(r, fmt::format("(pid {}) was killed by signal 9", victim), 1);
    EXPECT_LT(ending, 10);
  } else {
    expectOneLineError(r, fmt::format("(pid {}) stopped responding (its peers gave up waiting)", victim), 1);
    EXPECT_NE(r.output.find("[rank 0] balancenet: error: "), std::string::npos) << "the survivor did not give up:\n"
                                                                                << r.output;
    EXPECT_GE(ending, kStallTimeoutS);
    EXPECT_LT(ending, kStallTimeoutS + 6 + 10);
  }
  for (pid_t w : workers) EXPECT_FALSE(processAlive(w)) << "orphan worker " << w;
}

INSTANTIATE_TEST_SUITE_P(Signals, DeadStage, ::testing::Values(SIGKILL, SIGSTOP),
                         [](const auto& info) { return info.param == SIGKILL ? "Killed" : "Stopped"; });

}  // namespace
}  // namespace balancenet::testing
