// Hostile inputs, as a table: bad flags, config files, dataset files, environments and rendezvous
// mistakes (ports in use, strangers on the store port, wrong job tokens, mismatched world sizes). Every
// case must end the way expectOneLineError defines (one "balancenet: error:" line, the last one, naming
// the problem; the expected non-zero exit; no backtrace) before a 30 s kill timer, and leave the files
// it was given untouched.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include "BinaryFixture.h"
#include "RendezvousPeers.h"
#include "balancenet/data/IdxFile.h"

namespace balancenet::testing {
namespace {

constexpr double kKillTimerSeconds = 30;

// What a case may prepare before the command runs, and what it must find unchanged afterwards.
class Scene {
 public:
  Scene(const TempDir& dir, std::string dataDir) : dir_(dir), dataDir_(std::move(dataDir)), port_(freePort()) {}

  const TempDir& dir() const { return dir_; }
  const std::string& dataDir() const { return dataDir_; }
  int port() const { return port_; }
  void usePort(int port) { port_ = port; }

  // Replaces the dataset file `base` (e.g. "train-images-idx3-ubyte", plain or .gz) with `bytes`, written
  // as they are to base + suffix.
  void replaceDataFile(const std::string& base, const std::vector<uint8_t>& bytes, const std::string& suffix = "") {
    std::filesystem::remove(dataDir_ + "/" + base);
    std::filesystem::remove(dataDir_ + "/" + base + ".gz");
    protect(writeBytes(dataDir_ + "/" + base + suffix, bytes));
  }
  void replaceDataFile(const std::string& base, const data::IdxArray& array) {
    std::filesystem::remove(dataDir_ + "/" + base + ".gz");
    data::writeIdx(dataDir_ + "/" + base, array, /*gzip=*/false);
    protect(dataDir_ + "/" + base);
  }
  std::string writeFile(const std::string& name, const std::string& text) {
    return protect(writeBytes(dir_.file(name), bytesOf(text)));
  }

  // The file must be byte for byte the same after the command (bad input never damages what it read).
  std::string protect(const std::string& path) {
    protected_[path] = readFile(path);
    return path;
  }
  void expectProtectedFilesUnchanged() const {
    for (const auto& [path, bytes] : protected_) EXPECT_EQ(readFile(path), bytes) << path << " was changed";
  }

  // `balancenet train` with `flags` (placeholders expanded) and `env`, running beside the case's command.
  void startJob(const std::vector<std::string>& flags, const std::map<std::string, std::string>& env = {}) {
    ProcessOptions o;
    for (const auto& [name, value] : env) o.env[name] = expand(value);
    o.timeoutSeconds = 2 * kKillTimerSeconds;
    const std::string runDir = dir_.file("background-run-" + std::to_string(background_.size()));
    background_.push_back(std::make_unique<BackgroundRun>(trainCommand(dataDir_, runDir, expand(flags)), o));
    ASSERT_TRUE(waitForListener(port_, kKillTimerSeconds)) << "the background job never served port " << port_;
  }
  BackgroundRun& background(size_t i = 0) { return *background_.at(i); }

  template <typename Peer, typename... Args>
  Peer& hold(Args&&... args) {
    auto peer = std::make_shared<Peer>(std::forward<Args>(args)...);
    peers_.push_back(peer);
    return *peer;
  }

  // {port}, {dir} and {data} in flags and environment values.
  std::string expand(std::string s) const {
    for (const auto& [key, value] : std::map<std::string, std::string>{
             {"{port}", std::to_string(port_)}, {"{dir}", dir_.path()}, {"{data}", dataDir_}})
      for (auto at = s.find(key); at != std::string::npos; at = s.find(key, at + value.size()))
        s.replace(at, key.size(), value);
    return s;
  }
  std::vector<std::string> expand(std::vector<std::string> v) const {
    for (auto& s : v) s = expand(s);
    return v;
  }

 private:
  std::string writeBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
    return dir_.writeRaw(std::filesystem::relative(path, dir_.path()).string(), bytes);
  }

  const TempDir& dir_;
  std::string dataDir_;
  int port_;
  std::map<std::string, std::string> protected_;
  std::vector<std::shared_ptr<void>> peers_;
  std::vector<std::unique_ptr<BackgroundRun>> background_;  // declared last: stopped before the peers go
};

struct HostileCase {
  std::string name;
  std::vector<std::string> flags;               // after `train --data-dir D --run-dir R --threads 1 <quick>`
  std::map<std::string, std::string> env;       // values may use the placeholders too
  std::string error;                            // must appear in the error line (placeholders expanded)
  int exitCode = 2;                             // 2 bad input, 1 runtime failure
  std::function<void(Scene&)> setup = nullptr;  // files to write, peers and background jobs to start
  // When set, the background job must fail too, by itself, with this in its one error line.
  std::string backgroundError = "";
};

std::ostream& operator<<(std::ostream& os, const HostileCase& c) { return os << c.name; }

// Small and fast: a case that wrongly gets as far as training still ends within seconds (and fails).
const std::vector<std::string> kQuick{"--model", "mlp", "--steps", "2", "--global-batch", "8"};

std::vector<std::string> node(int rank, std::vector<std::string> more = {}) {
  std::vector<std::string> flags{"--nnodes",      "2",      "--node-rank",          std::to_string(rank),
                                 "--master-port", "{port}", "--rendezvous-timeout", "20"};
  flags.insert(flags.end(), more.begin(), more.end());
  return flags;
}

std::map<std::string, std::string> byHand(int rank, int world, std::map<std::string, std::string> more = {}) {
  more.insert({{"RANK", std::to_string(rank)},
               {"WORLD_SIZE", std::to_string(world)},
               {"MASTER_ADDR", "127.0.0.1"},
               {"MASTER_PORT", "{port}"}});
  return more;
}

std::vector<uint8_t> idxHeader(uint8_t rank, std::vector<uint32_t> dims) {
  std::vector<uint8_t> b{0, 0, 0x08, rank};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) b.push_back(static_cast<uint8_t>(d >> shift));
  return b;
}

template <typename T>
std::vector<T> concat(std::vector<T> a, const std::vector<T>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

data::IdxArray labels(int64_t n, uint8_t value = 1) { return {{n}, std::vector<uint8_t>(n, value)}; }

std::function<void(Scene&)> configFile(const std::string& yaml) {
  return [yaml](Scene& s) { s.writeFile("bad.yaml", yaml); };
}

std::vector<HostileCase> flagCases() {
  return {
      {"UnknownFlag", {"--bogus-flag", "3"}, {}, "--bogus-flag"},
      {"NonNumericSteps", {"--steps", "ten"}, {}, "--steps"},
      {"ZeroSteps", {"--steps", "0"}, {}, "--steps must be at least 1, got 0"},
      {"NegativeStopAccuracy",
       {"--stop-at-accuracy", "-0.5", "--eval-every", "1"},
       {},
       "--stop-at-accuracy must be in (0, 1], got -0.5"},
      {"StopAccuracyAboveOne", {"--stop-at-accuracy", "1.5", "--eval-every", "1"}, {}, "must be in (0, 1], got 1.5"},
      {"StopAccuracyWithoutEvaluations",
       {"--stop-at-accuracy", "0.8", "--eval-every", "0"},
       {},
       "--stop-at-accuracy needs --eval-every N > 0"},
      {"NegativeTimeBudget", {"--time-budget-s", "-1"}, {}, "--time-budget-s must not be negative, got -1"},
      {"NegativeEvalSamples", {"--eval-samples", "-5"}, {}, "--eval-samples must not be negative, got -5"},
      {"NonNumericEvalSamples", {"--eval-samples", "half"}, {}, "--eval-samples"},
      {"UnknownModel", {"--model", "transformer"}, {}, "unknown --model 'transformer'; choose one of: "},
      {"MissingTorchScriptFile", {"--model", "{dir}/missing.pt"}, {}, "missing.pt: not a readable TorchScript file"},
      {"SyncBatchNormWithTorchScript",
       {"--model", std::string(BALANCENET_SOURCE_DIR) + "/tests/fixtures/tiny_cnn.pt", "--sync-bn"},
       {},
       "--sync-bn needs a zoo model"},
      {"GarbageTorchScriptFile",
       {"--model", "{dir}/garbage.pt"},
       {},
       "garbage.pt: not a readable TorchScript file",
       2,
       [](Scene& s) { s.writeFile("garbage.pt", "not a zip archive"); }},
      {"SplitOfWrongLength",
       {"--nodes", "2", "--split", "2,3,3"},
       {},
       "--split has 3 entries but the job has 2 workers"},
      {"SplitNotSummingToGlobalBatch",
       {"--nodes", "2", "--split", "2,3"},
       {},
       "--split sums to 5 but --global-batch is 8"},
      {"SplitWithEmptyWorker", {"--nodes", "2", "--split", "8,0"}, {}, "worker 1 gets 0 samples"},
      {"GlobalBatchSmallerThanWorkers",
       {"--nodes", "3", "--global-batch", "2"},
       {},
       "--global-batch 2 is smaller than the 3 workers"},
      {"UnknownPolicy", {"--policy", "fastest"}, {}, "unknown --policy 'fastest'; choose one of: "},
      // --global-batch auto and schedules (issue 32).
      {"AutoBatchBoundsReversed",
       {"--global-batch", "auto:64:32"},
       {},
       "--global-batch 'auto:64:32': MAX 32 is below MIN 64"},
      {"AutoBatchOnOneWorker",
       {"--nodes", "1", "--global-batch", "auto"},
       {},
       "--global-batch auto measures the gradient noise scale across workers and needs at least 2"},
      {"AutoBatchWithPipelines",
       {"--nodes", "2", "--pipeline-stages", "2", "--global-batch", "auto:8:64"},
       {},
       "--global-batch auto:8:64 is for data parallelism"},
      {"AutoBatchWithFactors",
       {"--nodes", "2", "--comm", "sfb", "--global-batch", "auto:8:64"},
       {},
       "not with --comm sfb or hybrid"},
      {"UnknownLrScaling", {"--lr-scaling", "cubic"}, {}, "--lr-scaling"},
      {"UnknownCommMode",
       {"--comm", "carrier-pigeon"},
       {},
       "unknown --comm 'carrier-pigeon'; choose one of: auto, allreduce, flat, hd, a2a, sfb, hybrid"},
      {"DeviceCudaWithoutAGpu",
       {"--device", "cuda"},
       {{"CUDA_VISIBLE_DEVICES", ""}},
       "--device asks for a GPU, and this host has none that CUDA can use"},
      {"UnknownDevice", {"--device", "tpu"}, {}, "--device 'tpu': expected auto, cpu, cuda or cuda:N"},
      {"DevicesOfWrongLength", {"--nodes", "2", "--devices", "cpu"}, {}, "--devices names 1 device for 2 workers"},
      {"NcclForACpuWorker",
       {"--nodes", "2", "--devices", "cuda:0,cpu", "--backend", "nccl"},
       {},
       "--backend nccl needs every worker on a GPU; --devices puts worker 1 on the CPU"},
      {"GpuPipelineNotYet",
       {"--nodes", "2", "--device", "cuda", "--pipeline-stages", "2"},
       {},
       "pipeline stages (--pipeline-stages): not on GPU workers yet (use --device cpu)"},
      {"StalenessWithoutParameterServers", {"--staleness", "2"}, {}, "--staleness is for --comm ps"},
      {"NonPositiveBucketSize", {"--bucket-mb", "0"}, {}, "--bucket-mb must be positive"},
      {"OffloadFractionAboveOne", {"--offload-below", "1.5"}, {}, "--offload-below must be between 0 and 1, got 1.5"},
      {"EmulationListOfWrongLength",
       {"--nodes", "2", "--node-speed", "100,100,25"},
       {},
       "--node-speed has 3 values but the job has 2 workers"},
      {"BandwidthListOfWrongLength",
       {"--nodes", "2", "--net-bandwidth-mbps", "100"},
       {},
       "--net-bandwidth-mbps has 1 values but the job has 2 workers"},
      {"NegativeLearningRate", {"--lr", "-1"}, {}, "--lr must be positive, got -1"},
      {"ShardedStateWithElasticButNoCheckpoints",
       {"--shard-state", "--elastic"},
       {},
       "--elastic with --shard-state needs --checkpoint-dir: a lost worker's slice of the optimiser state is rebuilt"},
      {"AccumulateNeitherCountNorAuto", {"--accumulate", "2.5"}, {}, "--accumulate must be auto or a whole number"},
      {"MemoryCapBelowOneSampleUnderAccumulateAuto",
       {"--nodes", "2", "--model", "cnn", "--memory-limit-mb", "0,14", "--accumulate", "auto"},
       {},
       "node 1 (the whole model) needs an estimated"},
      {"RecomputeNeitherNoneBlocksNorAuto",
       {"--recompute", "all"},
       {},
       "--recompute must be none, blocks or auto, got 'all'"},
      {"RecomputeWithPipelineStages",
       {"--nodes", "2", "--pipeline-stages", "2", "--recompute", "blocks"},
       {},
       "--recompute is not yet with --pipeline-stages"},
      {"RecomputeWithSyncBatchNorm",
       {"--model", "resnet18", "--width", "0.25", "--sync-bn", "--recompute", "auto"},
       {},
       "--recompute is not with --sync-bn"},
      {"RecomputeBlocksOfAModelOfOneBlock",
       {"--model", std::string(BALANCENET_SOURCE_DIR) + "/tests/fixtures/tiny_cnn.pt", "--recompute", "blocks"},
       {},
       "--recompute blocks needs a model cut into blocks"},
      {"MemoryCapBelowOneRecomputedSample",
       {"--nodes", "2", "--model", "cnn", "--memory-limit-mb", "0,14", "--accumulate", "auto", "--recompute", "auto"},
       {},
       "node 1 (the whole model) needs an estimated"},
      {"UnknownLogLevel", {"--log-level", "loud"}, {}, "--log-level must be one of"},
      {"PortOutOfRange", {"--master-port", "70000"}, {}, "--master-port"},
      {"NodeRankOutsideTheJob",
       {"--nnodes", "2", "--node-rank", "2", "--master-port", "{port}"},
       {},
       "--node-rank 2 must be below --nnodes 2"},
      {"SeveralHostsWithoutPort", {"--nnodes", "2"}, {}, "a job over several hosts needs --master-port"},
      {"EmptyJobToken", {"--job-token", ""}, {}, "--job-token: must not be empty"},
      {"ZeroWorkers", {"--nodes", "0"}, {}, "--workers must be at least 1, got 0"},
      {"SlowdownBelowOne", {"--nodes", "2", "--slowdown", "0.5,1"}, {}, "--slowdown factors must be at least 1"},
      {"MomentumOfOne", {"--momentum", "1"}, {}, "--momentum must be in [0, 1), got 1"},
      // Flags parsed by their own functions while CLI11 parses: their errors are bad input too (were exit 1).
      {"UnknownAugmentation", {"--augment", "crop,flop"}, {}, "--augment 'crop,flop': a comma list of crop and flip"},
      {"UnknownLoss", {"--loss", "hinge"}, {}, "--loss 'hinge': choose auto, cross-entropy or mse"},
      {"NormalizeWithoutStd", {"--normalize", "0.5"}, {}, "--normalize '0.5': give the means then the stds"},
  };
}

std::vector<HostileCase> configCases() {
  const std::vector<std::string> config{"--config", "{dir}/bad.yaml"};
  return {
      {"ConfigUnknownKey", config, {}, "unknown key 'modle' in --config", 2, configFile("modle: mlp\n")},
      {"ConfigInvalidYaml", config, {}, "is not valid YAML: yaml-cpp: error at line 2", 2, configFile("steps: [1\n")},
      {"ConfigNotAMap", config, {}, "must hold a map of flag names to values", 2, configFile("- steps\n- 3\n")},
      {"ConfigSwitchNotBoolean",
       config,
       {},
       "config key 'sync-bn' is a switch: true or false, not 'maybe'",
       2,
       configFile("sync-bn: maybe\n")},
      {"ConfigNestedMap",
       config,
       {},
       "config key 'optimizer': nested maps are not flags",
       2,
       configFile("optimizer:\n  name: sgd\n")},
      {"ConfigBadValue", config, {}, "--width must be positive, got 0", 2, configFile("width: 0\n")},
      {"ConfigKeyGivenTwice",
       config,
       {},
       "config key 'global_batch' is given twice",
       2,
       configFile("global-batch: 32\nglobal_batch: 64\n")},
      {"ConfigNamingAnotherConfig",
       config,
       {},
       "cannot name another config file",
       2,
       configFile("config: other.yaml\n")},
      {"ConfigBinaryGarbage",
       config,
       {},
       "bad.yaml",
       2,
       [](Scene& s) {
         const auto junk = randomBytes(512, 7);
         s.writeFile("bad.yaml", std::string(junk.begin(), junk.end()));
       }},
      {"ConfigMissing", {"--config", "{dir}/missing.yaml"}, {}, "missing.yaml: cannot be read"},
  };
}

std::vector<HostileCase> datasetCases() {
  const std::string trainImages = "train-images-idx3-ubyte", trainLabels = "train-labels-idx1-ubyte";
  const std::string testImages = "t10k-images-idx3-ubyte", testLabels = "t10k-labels-idx1-ubyte";
  return {
      {"DataDirMissing", {"--data-dir", "{dir}/nowhere"}, {}, "idx:{dir}/nowhere: no such directory"},
      {"DataDirIsAFile",
       {"--data-dir", "{dir}/plain.txt"},
       {},
       "no such directory",
       2,
       [](Scene& s) { s.writeFile("plain.txt", "not a directory"); }},
      {"DataFileMissing",
       {},
       {},
       "no t10k-images-idx3-ubyte(.gz) found",
       2,
       [=](Scene& s) { std::filesystem::remove(s.dataDir() + "/" + testImages + ".gz"); }},
      {"DataFileWrongMagic",
       {},
       {},
       trainImages,
       2,
       [=](Scene& s) { s.replaceDataFile(trainImages, bytesOf(std::string("\x00\x00\x08\x01garbage", 11))); }},
      {"DataFileEmpty",
       {},
       {},
       trainLabels,
       2,
       [=](Scene& s) { s.replaceDataFile(trainLabels, std::vector<uint8_t>{}); }},
      {"DataFileTruncated",
       {},
       {},
       testLabels,
       2,
       [=](Scene& s) {
         s.replaceDataFile(testLabels, concat(idxHeader(1, {128}), {1, 2}));
       }},
      {"DataFileTrailingBytes",
       {},
       {},
       testLabels,
       2,
       [=](Scene& s) { s.replaceDataFile(testLabels, concat(idxHeader(1, {128}), std::vector<uint8_t>(200, 1))); }},
      {"DataFileGzipCutShort",
       {},
       {},
       trainImages,
       2,
       [=](Scene& s) {
         auto gz = s.dir().readRaw("data/" + trainImages + ".gz");
         gz.resize(gz.size() / 2);
         s.replaceDataFile(trainImages, gz, ".gz");
       }},
      {"DataImagesGivenAsLabels",
       {},
       {},
       trainImages,
       2,
       [=](Scene& s) { s.replaceDataFile(trainImages, labels(512)); }},
      {"DataLabelOutOfRange",
       {},
       {},
       "label 200 of sample 0 is not a class of the training set (0..9",
       2,
       [=](Scene& s) { s.replaceDataFile(testLabels, labels(128, 200)); }},
      {"DataCountsDiffer",
       {},
       {},
       "has 128 images but t10k-labels-idx1-ubyte has 100 labels",
       2,
       [=](Scene& s) { s.replaceDataFile(testLabels, labels(100)); }},
      {"DataImagesOfWrongSize",
       {},
       {},
       "the test images are 32x32 pixels but the training images",
       2,
       [=](Scene& s) {
         s.replaceDataFile(testImages, data::IdxArray{{128, 32, 32}, std::vector<uint8_t>(128 * 32 * 32)});
       }},
  };
}

std::vector<HostileCase> environmentCases() {
  return {
      {"RankOutsideWorld", {}, {{"RANK", "3"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "29500"}}, "RANK='3'"},
      {"RankWithoutWorldSize", {}, {{"RANK", "0"}, {"MASTER_PORT", "29500"}}, "RANK is set but WORLD_SIZE is not"},
      {"MasterPortNotANumber", {}, {{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"MASTER_PORT", "http"}}, "MASTER_PORT='http'"},
      {"EmptyJobTokenVariable", {}, {{"BALANCENET_JOB_TOKEN", ""}}, "BALANCENET_JOB_TOKEN is set but empty"},
      // What a scheduler sets, wrong (schedulers/).
      {"SlurmMalformedNodeList",
       {},
       {{"SLURM_PROCID", "0"},
        {"SLURM_STEP_ID", "0"},
        {"SLURM_NTASKS", "2"},
        {"SLURM_NNODES", "2"},
        {"SLURM_JOB_NODELIST", "node[01-"}},
       "SLURM_JOB_NODELIST='node[01-' is not a Slurm list"},
      {"SlurmTasksDisagreeWithTheFlags",
       {"--nnodes", "2", "--nproc-per-node", "2"},
       {{"SLURM_PROCID", "0"},
        {"SLURM_STEP_ID", "0"},
        {"SLURM_NTASKS", "3"},
        {"SLURM_NNODES", "1"},
        {"SLURM_JOB_ID", "5"}},
       "SLURM_NTASKS=3 (slurm starts each worker) but the flags ask for 4 workers"},
      {"SlurmRankOutOfRange",
       {},
       {{"SLURM_PROCID", "4"}, {"SLURM_STEP_ID", "0"}, {"SLURM_STEP_NUM_TASKS", "4"}, {"SLURM_NNODES", "1"}},
       "SLURM_PROCID='4' must be an integer in [0, 3]"},
      {"MpirunAcrossHostsWithoutMasterAddr",
       {},
       {{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}},
       "give every rank MASTER_ADDR (mpirun -x MASTER_ADDR=<rank 0's host>)"},
      {"KubernetesIndexBeyondTheHosts",
       {"--nnodes", "2", "--master-port", "29500"},
       {{"JOB_COMPLETION_INDEX", "2"}, {"MASTER_ADDR", "10.0.0.1"}},
       "JOB_COMPLETION_INDEX=2 is not below --nnodes 2"},
  };
}

std::vector<HostileCase> rendezvousCases() {
  const std::string inUse = "cannot serve the rendezvous store on port {port} (is it in use?)";
  const std::map<std::string, std::string> alpha{{"BALANCENET_JOB_TOKEN", "alpha-7f3e2a91c4d85b60"}};
  const std::map<std::string, std::string> beta{{"BALANCENET_JOB_TOKEN", "beta-0c1d2e3f40516273"}};
  const std::string tokenMismatch = "job token does not match the job at 127.0.0.1:{port}";
  return {
      {"PortTakenByAnotherProgram",
       node(0),
       {},
       inUse,
       1,
       [](Scene& s) { s.usePort(s.hold<SilentListener>().port()); }},
      {"SecondJobOnTheSamePort", node(0), {}, inUse, 1, [](Scene& s) { s.startJob(concat(kQuick, node(0))); }},
      {"NobodyAtTheStorePort",
       {"--rendezvous-timeout", "2"},
       byHand(1, 2),
       "cannot reach the rendezvous store at 127.0.0.1:{port} within 2 s",
       1},
      {"StorePortThatNeverAnswers",
       {"--rendezvous-timeout", "2"},
       byHand(1, 2),
       "the job's store at 127.0.0.1:{port} stopped answering: no reply to its first request within 5 s",
       1,
       [](Scene& s) { s.usePort(s.hold<SilentListener>().port()); }},
      {"StorePortAnsweringGarbage",
       {"--rendezvous-timeout", "2"},
       byHand(1, 2),
       // c10d's client reads the replies on two threads; which one trips over the garbage first varies.
       "127.0.0.1:{port}",
       1,
       [](Scene& s) { s.usePort(s.hold<GarbageServer>(randomBytes(4096, 11)).port()); }},
      {"PeerThatNeverArrives", {"--rendezvous-timeout", "2"}, byHand(0, 2), "rank(s) 1 of 2 never arrived", 1},
      {"WrongJobToken", node(1), beta, tokenMismatch, 2, [=](Scene& s) { s.startJob(concat(kQuick, node(0)), alpha); }},
      {"MissingJobToken",
       node(1),
       {},
       tokenMismatch + " (this process has none)",
       2,
       [=](Scene& s) { s.startJob(concat(kQuick, node(0)), alpha); }},
      {"UnexpectedJobToken", node(1), beta, tokenMismatch, 2, [=](Scene& s) { s.startJob(concat(kQuick, node(0))); }},
      {"WrongJobTokenOfAWorkerStartedByHand",
       {},
       byHand(1, 2, beta),
       tokenMismatch,
       2,
       [=](Scene& s) { s.startJob(kQuick, byHand(0, 2, alpha)); }},
      // Hosts of different sizes (issue 31): counts may differ per host; lists that disagree, two launchers with one
      // node rank and a host of no workers are one line, on every host at once, never a wait for the timeout.
      {"NodesWithDifferentWorkerLists",
       node(1, {"--nproc-per-node", "1,1"}),
       {},
       "host 1: the hosts run 2,1 workers but this host's --nproc-per-node 1,1 says otherwise",
       2,
       [](Scene& s) {
         s.startJob(concat(kQuick, node(0, {"--nproc-per-node", "2,1"})));
       },
       "host 1: the hosts run 2,1 workers"},
      // Three hosts, host 2 never started: the meeting cannot end before the second host 1 arrives, whichever of the
      // two claims first.
      {"TwoHostsWithTheSameNodeRank",
       node(1, {"--nnodes", "3"}),
       {},
       "two hosts were started with --node-rank 1 for the job at 127.0.0.1:{port}",
       2,
       [](Scene& s) {
         s.startJob(concat(kQuick, node(0, {"--nnodes", "3"})));
         s.startJob(concat(kQuick, node(1, {"--nnodes", "3"})));
       },
       "two hosts were started with --node-rank 1"},
      {"HostWithNoWorkers",
       node(1, {"--nproc-per-node", "0"}),
       {},
       "--nproc-per-node must be this host's worker count"},
      {"WorkersWithDifferentWorldSizes",
       {},
       byHand(1, 3),
       "world size mismatch: this process was started for 3 workers",
       2,
       [](Scene& s) { s.startJob(kQuick, byHand(0, 2)); },
       "rendezvous aborted: rank 1 was started for 3 workers, but this job has 2"},
  };
}

// Closed by default: a store other hosts can reach needs a token, refused before anything opens (so no
// background job: the address is a documentation one, TEST-NET-3, that nothing here answers).
std::vector<HostileCase> jobTokenCases() {
  const std::string open =
      "the job's store at 203.0.113.7:{port} is reachable from other hosts and this process has no job token";
  const auto tokenFile = [](const char* text, std::filesystem::perms mode) {
    return [=](Scene& s) { std::filesystem::permissions(s.writeFile("job-token", text), mode); };
  };
  using std::filesystem::perms;
  return {
      {"NonLoopbackMasterWithoutToken", node(0, {"--master-addr", "203.0.113.7"}), {}, open},
      {"NonLoopbackMasterOfAWorkerStartedByHand",
       {},
       {{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "203.0.113.7"}, {"MASTER_PORT", "{port}"}},
       open},
      {"JobTokenAutoWhereTheStoreIsNotServed",
       node(1, {"--master-addr", "203.0.113.7", "--job-token", "auto"}),
       {},
       "--job-token auto makes the token on the process that serves the job's store"},
      {"GroupReadableTokenFile",
       node(0, {"--master-addr", "203.0.113.7", "--job-token-file", "{dir}/job-token"}),
       {},
       "--job-token-file {dir}/job-token: permissions 0640 are too open",
       2,
       tokenFile("4f1d0c9e8b7a6f5e\n", perms::owner_read | perms::owner_write | perms::group_read)},
      {"EmptyTokenFile",
       node(0, {"--job-token-file", "{dir}/job-token"}),
       {},
       "--job-token-file {dir}/job-token: its first line is empty",
       2,
       tokenFile("\n", perms::owner_read | perms::owner_write)},
      {"TokenAndTokenFile",
       {"--job-token", "a1b2c3d4e5f6", "--job-token-file", "{dir}/none"},
       {},
       "--job-token excludes --job-token-file"},
  };
}

// Each setup writes its checkpoint files with Scene::protect: a refused resume damages none of them.
std::vector<HostileCase> checkpointAndJoinCases() {
  const auto damaged = [](std::string bytes) {
    return [bytes](Scene& s) { s.writeFile("ckpt/step-00000005.ckpt", bytes); };
  };
  return {
      {"ResumeFromACheckpointWithoutThePreamble",
       {"--checkpoint-dir", "{dir}/ckpt", "--resume"},
       {},
       "--resume: none of the 1 checkpoints in {dir}/ckpt is intact",
       2,
       damaged("hello")},
      {"ResumeFromAnEmptyCheckpointFile",
       {"--checkpoint-dir", "{dir}/ckpt", "--resume"},
       {},
       "--resume: none of the 1 checkpoints in {dir}/ckpt is intact",
       2,
       damaged("")},
      {"ResumeFromACheckpointOfRandomBytes",
       {"--checkpoint-dir", "{dir}/ckpt", "--resume"},
       {},
       "--resume: none of the 1 checkpoints in {dir}/ckpt is intact",
       2,
       [](Scene& s) {
         const auto noise = randomBytes(4096, 5);
         s.writeFile("ckpt/step-00000005.ckpt", std::string(noise.begin(), noise.end()));
       }},
      {"ResumeFromADirectoryWithoutCheckpoints",
       {"--checkpoint-dir", "{dir}/ckpt", "--resume"},
       {},
       "--resume: no checkpoint in {dir}/ckpt",
       2,
       [](Scene& s) { s.writeFile("ckpt/notes.txt", "not one"); }},
      {"CheckpointDirectoryIsAFile",
       {"--checkpoint-dir", "{dir}/ckpt"},
       {},
       "--checkpoint-dir {dir}/ckpt exists and is not a directory",
       2,
       [](Scene& s) { s.writeFile("ckpt", "a file"); }},
      {"FreshRunIntoADirectoryWithCheckpoints",
       {"--checkpoint-dir", "{dir}/ckpt"},
       {},
       "--checkpoint-dir {dir}/ckpt already holds checkpoints",
       2,
       damaged("old")},
      {"KeepNoCheckpoints",
       {"--checkpoint-dir", "{dir}/ckpt", "--keep-checkpoints", "0"},
       {},
       "--keep-checkpoints must be at least 1, got 0",
       2},
      {"StoreFileWithoutJoin", {"--store-file", "{dir}/store"}, {}, "--store-file is only for --join", 2},
      {"JoinWithoutAStoreOrPort", {"--elastic", "--join"}, {}, "--join needs the running job's --store-file", 2},
      {"JoinAJobThatIsNotThere",
       {"--elastic", "--join", "--store-file", "{dir}/gone/store"},
       {},
       "--store-file {dir}/gone/store: no such file (is the job running?",
       2},
      // A ninth worker would get no sample: the job would end at its join with an invalid split.
      {"MoreMaxNodesThanSamples",
       {"--elastic", "--max-nodes", "9"},
       {},
       "--max-workers 9 is more than --global-batch 8 (every worker needs at least one sample)",
       2},
  };
}

// Pipeline parallelism: combinations refused by validation, and placements refused by the launcher's
// placement check (the model built once, before any worker starts).
std::vector<HostileCase> pipelineCases() {
  return {
      {"WorkersNotAMultipleOfStages",
       {"--nodes", "6", "--pipeline-stages", "4"},
       {},
       "--nodes 6 is not a multiple of --pipeline-stages 4"},
      {"PipelineWithElastic",
       {"--nodes", "2", "--pipeline-stages", "2", "--elastic"},
       {},
       "--elastic is not supported with --pipeline-stages 2 yet"},
      {"PartitionBeyondTheModel",
       {"--nodes", "2", "--pipeline-stages", "2", "--partition", "0,1-99"},
       {},
       "--partition: stage 1's range 1-99 goes past the last block"},
      {"MemoryLimitTooSmallForDataParallelism",
       {"--nodes", "2", "--memory-limit-mb", "1"},
       {},
       "node 0 (the whole model) needs an estimated"},
  };
}

// --data formats and the flags that go with them (models, losses, normalisation, augmentation, context).
std::vector<HostileCase> dataFormatCases() {
  const auto corpus = [](Scene& s) { s.writeFile("corpus.txt", "a small corpus of text for the cases\n"); };
  return {
      {"DataUnknownFormat", {"--data", "foo:bar"}, {}, "--data foo:bar: unknown format 'foo'"},
      {"DataNpyMissing", {"--data", "npy:{dir}/missing.npy,{dir}/y.npy"}, {}, "{dir}/missing.npy: no such file"},
      {"ImageModelOnText",
       {"--data", "text:{dir}/corpus.txt", "--context", "4", "--model", "cnn"},
       {},
       "--model cnn takes images; the data gives [4] token windows (use --model gpt)",
       2,
       corpus},
      {"GptOnImages", {"--model", "gpt"}, {}, "--model gpt takes token windows; the data gives samples [1,28,28]"},
      {"MseOnClasses", {"--loss", "mse"}, {}, "--loss mse: idx:{data} has class targets"},
      {"LabelSmoothingOfOneAndAHalf", {"--label-smoothing", "1.5"}, {}, "--label-smoothing must be in [0, 1), got 1.5"},
      {"AugmentRotate", {"--augment", "rotate"}, {}, "--augment 'rotate': a comma list of crop and flip, or none"},
      {"TextWithoutContext",
       {"--data", "text:{dir}/corpus.txt"},
       {},
       "text:{dir}/corpus.txt: --context is required",
       2,
       corpus},
  };
}

// --precision and --grad-compress: names, the modes that cannot take them, and an fp16 run whose gradient overflows
// every step (the weights blown up by --lr 1e5 in the first): it stops at the 50th skipped step in a row with exit 1,
// not NaN weights.
std::vector<HostileCase> precisionCases() {
  return {
      {"PrecisionUnknown", {"--precision", "fp8"}, {}, "--precision must be fp32, bf16 or fp16, got 'fp8'"},
      {"Fp16WithParameterServers",
       {"--nodes", "2", "--comm", "ps", "--ps", "1", "--precision", "fp16"},
       {},
       "--precision fp16 needs the summed gradient on the workers to unscale it: not with --comm ps"},
      {"GradCompressWithHalvingDoubling",
       {"--nodes", "2", "--comm", "hd", "--grad-compress", "bf16"},
       {},
       "--grad-compress is for --comm allreduce, flat, auto or ps (got --comm hd)"},
      {"PowerSgdWithParameterServers",
       {"--nodes", "2", "--comm", "ps", "--ps", "1", "--grad-compress", "powersgd"},
       {},
       "--grad-compress powersgd is not for --comm ps"},
      {"PowerSgdRankTooLargeForEveryMatrix",
       {"--nodes", "2", "--grad-compress", "powersgd:4000"},
       {},
       "--grad-compress powersgd:4000 factors no matrix of this model (its matrices are too small for that rank): "
       "choose a rank of at most"},
      {"PowerSgdRankZero",
       {"--nodes", "2", "--grad-compress", "powersgd:0"},
       {},
       "--grad-compress powersgd:RANK needs a RANK of 1 or more, got '0'"},
      {"Fp16OverflowingEveryStep",
       {"--nodes", "2", "--steps", "80", "--precision", "fp16", "--lr", "1e5", "--eval-samples", "0"},
       {},
       "--precision fp16: the gradient was not finite in 50 steps in a row",
       1},
  };
}

std::vector<HostileCase> allCases() {
  std::vector<HostileCase> all;
  for (auto part : {flagCases(), configCases(), datasetCases(), environmentCases(), rendezvousCases(), jobTokenCases(),
                    checkpointAndJoinCases(), pipelineCases(), dataFormatCases(), precisionCases()})
    all.insert(all.end(), part.begin(), part.end());
  return all;
}

class HostileInput : public BinaryFixture, public ::testing::WithParamInterface<HostileCase> {};

TEST_P(HostileInput, FailsWithOneClearLine) {
  const HostileCase& c = GetParam();
  Scene scene(dir_, dataDir_);
  if (c.setup) c.setup(scene);
  ASSERT_FALSE(HasFatalFailure());
  ProcessOptions o;
  o.timeoutSeconds = kKillTimerSeconds;
  for (const auto& [name, value] : c.env) o.env[name] = scene.expand(value);
  auto flags = kQuick;
  const auto own = scene.expand(c.flags);
  flags.insert(flags.end(), own.begin(), own.end());
  const auto r = train(flags, o);
  expectOneLineError(r, scene.expand(c.error), c.exitCode);
  if (!c.backgroundError.empty()) expectOneLineError(scene.background().finish(), c.backgroundError, c.exitCode);
  scene.expectProtectedFilesUnchanged();
}

INSTANTIATE_TEST_SUITE_P(Table, HostileInput, ::testing::ValuesIn(allCases()),
                         [](const ::testing::TestParamInfo<HostileCase>& info) { return info.param.name; });

TEST(HostileInputTable, HasAtLeastThirtyDistinctCases) {
  std::set<std::string> names;
  for (const auto& c : allCases()) names.insert(c.name);
  EXPECT_GE(names.size(), 30u);
  EXPECT_EQ(names.size(), allCases().size()) << "two cases share a name";
}

}  // namespace
}  // namespace balancenet::testing
