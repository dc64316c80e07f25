// `balancenet federate` end to end, real processes over loopback: FedAvg with one local step on iid shards is
// synchronous data parallelism; R rounds equal R/2 + --resume R/2 bit for bit; a killed client is left out and
// rejoins; a client past the deadline is left out as late; the clients evaluate on their held-out samples; a slow
// emulated link lengthens its client's tasks; bad flags are one line.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <fstream>
#include <set>
#include <sstream>

#include <signal.h>

#include <nlohmann/json.hpp>

#include "BinaryFixture.h"
#include "CsvRows.h"
#include "FedAvgReference.h"
#include "balancenet/data/OpenDataset.h"
#include "balancenet/federated/FederatedOptions.h"
#include "balancenet/federated/LabelPartition.h"
#include "balancenet/federated/process/FederatedClient.h"
#include "balancenet/federated/process/HeldOutSplit.h"
#include "balancenet/federated/process/LocalTraining.h"
#include "balancenet/federated/process/ModelWeights.h"
#include "balancenet/models/ModelZoo.h"
#include "testing/FloatBound.h"

namespace balancenet::testing {
namespace {

struct RoundsCsvRow {
  int64_t round = 0;
  int client = 0;
  int64_t doneSteps = 0;
  std::string status;
};

// rounds.csv: round,wall_s,round_s,test_accuracy,test_loss,client,assigned_steps,done_steps,...,status
std::vector<RoundsCsvRow> readRoundsCsv(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // header
  std::vector<RoundsCsvRow> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
    if (cells.size() < 14) continue;
    rows.push_back({std::stoll(cells[0]), std::stoi(cells[5]), std::stoll(cells[7]), cells[13]});
  }
  return rows;
}

// The launcher's child with RANK=rank, or -1.
pid_t launchedProcessOfRank(pid_t launcher, int rank) {
  for (pid_t child : childrenOf(launcher)) {
    std::ifstream env("/proc/" + std::to_string(child) + "/environ", std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(env)), std::istreambuf_iterator<char>());
    std::stringstream ss(all);
    for (std::string var; std::getline(ss, var, '\0');)
      if (var == "RANK=" + std::to_string(rank)) return child;
  }
  return -1;
}

class FederatedProcess : public BinaryFixture {
 protected:
  ProcessResult federate(const std::string& runName, const std::vector<std::string>& flags,
                         ProcessOptions options = {}) {
    std::vector<std::string> args{"federate", "--data-dir", dataDir_,  "--run-dir", dir_.file(runName),
                                  "--model",  "cnn",        "--width", "0.5",       "--local-batch",
                                  "16"};
    args.insert(args.end(), flags.begin(), flags.end());
    if (options.timeoutSeconds == 120) options.timeoutSeconds = 90;
    return run(args, options);
  }
};

// Clients 0..3 each take one SGD step on their first local batch; FedAvg averages the steps weighted by shard
// size: exactly one step of synchronous data parallelism on the union of those batches, gradients weighted
// by shard size. The reference is computed here, in one process, from the same library functions.
TEST_F(FederatedProcess, FedAvgWithOneLocalStepIsSynchronousDataParallelism) {
  constexpr int kClients = 4;
  constexpr uint64_t kSeed = 7;
  constexpr double kLr = 0.1;
  const auto r = federate("iid", {"--clients",
                                  "4",
                                  "--rounds",
                                  "1",
                                  "--strategy",
                                  "fedavg",
                                  "--alpha",
                                  "iid",
                                  "--local-steps",
                                  "1",
                                  "--dropout",
                                  "0",
                                  "--lr",
                                  "0.1",
                                  "--seed",
                                  "7",
                                  "--save-params",
                                  dir_.file("fed.params"),
                                  "--client-eval-fraction",
                                  "0"});  // whole shards train, as the reference's
  ASSERT_EQ(r.exitCode, 0) << r.output;

  data::DataOptions dataOptions;
  dataOptions.source = "idx:" + dataDir_;
  const auto train = data::openDataset(dataOptions).train;  // normalised as the run's: the statistics are computed
  const auto shards = federated::datasetShards(*train, kClients, federated::kIid, kSeed);
  models::ModelOptions options;
  options.name = "cnn";
  options.width = 0.5;
  options.dropout = 0;
  at::manual_seed(kSeed);
  auto model = models::buildModel(options);
  const auto start = federated::flatWeights(*model.net);
  int64_t total = 0;
  for (const auto& s : shards) total += static_cast<int64_t>(s.size());
  std::vector<ReferenceClient> clients;
  for (int c = 0; c < kClients; ++c) {
    const auto shard = federated::takeShard(train, shards[c]);
    clients.push_back({shard.data, federated::LocalBatches(kSeed, 0, kClients, c, shard.size(), 16).next(),
                       static_cast<double>(shards[c].size()) / total});
  }
  const auto reference = dataParallelStep(*model.net, start, clients, kLr);
  const auto saved = loadSavedParameters(dir_.file("fed.params"));
  const auto params = model.net->parameters();
  ASSERT_EQ(saved.size(), params.size());
  const double worst = maxDifference(saved, reference);
  const double bound = exactnessBound(reference, 1);  // one step
  std::cout << "max |federated - data parallel| = " << worst << " (float bound " << bound << ")\n";
  EXPECT_LT(worst, bound);
  EXPECT_GT((saved[0] - params[0].detach()).abs().max().item<double>(), bound) << "the step must move the weights";
}

TEST_F(FederatedProcess, ResumedRunEqualsAStraightOneBitForBit) {
  const std::vector<std::string> common{"--clients",           "3", "--strategy", "fedavg", "--alpha",      "0.5",
                                        "--local-steps",       "2", "--seed",     "3",      "--eval-every", "2",
                                        "--client-eval-every", "2"};
  auto with = [&](std::vector<std::string> extra) {
    auto flags = common;
    flags.insert(flags.end(), extra.begin(), extra.end());
    return flags;
  };
  const auto straight = federate("straight", with({"--rounds", "4", "--save-params", dir_.file("straight.params")}));
  ASSERT_EQ(straight.exitCode, 0) << straight.output;
  const auto first = federate("first", with({"--rounds", "2", "--checkpoint-dir", dir_.file("ckpt")}));
  ASSERT_EQ(first.exitCode, 0) << first.output;
  const auto rest = federate("rest", with({"--rounds", "4", "--checkpoint-dir", dir_.file("ckpt"), "--resume",
                                           "--save-params", dir_.file("resumed.params")}));
  ASSERT_EQ(rest.exitCode, 0) << rest.output;
  EXPECT_NE(rest.output.find("resumed from"), std::string::npos) << rest.output;
  const auto a = loadSavedParameters(dir_.file("straight.params"));
  const auto b = loadSavedParameters(dir_.file("resumed.params"));
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(at::equal(a[i], b[i])) << "tensor " << i;
  // The resumed run's records go on from the checkpoint's: rounds 0..3, three clients each; so do the
  // clients' evaluations (rounds 0, 2 and each run's last: 1 and 3), and they did not change the training.
  EXPECT_EQ(readRoundsCsv(dir_.file("rest/rounds.csv")).size(), 12u);
  std::multiset<std::string> evaluated;
  for (const auto& row : readCsvRows(dir_.file("rest/client_eval.csv"))) evaluated.insert(row.at("round"));
  EXPECT_EQ(evaluated, (std::multiset<std::string>{"0", "0", "0", "1", "1", "1", "2", "2", "2", "3", "3", "3"}));
  // Resuming a finished run, or without a checkpoint, is one line before any process starts.
  expectOneLineError(federate("again", with({"--rounds", "4", "--checkpoint-dir", dir_.file("ckpt"), "--resume"})), "",
                     2);
}

// A client killed (SIGKILL) mid-run: the server names it and leaves it out; the launcher restarts it
// (--max-restarts) and it rejoins at a later round; the run completes.
TEST_F(FederatedProcess, KilledClientIsLeftOutAndRejoins) {
  std::atomic<bool> started{false};
  bool killed = false;
  ProcessOptions o;
  o.onOutput = [&](const std::string& out, double) {
    if (out.find("round 2/") != std::string::npos) started = true;
  };
  o.whileRunning = [&](pid_t launcher, double) {
    if (!started || killed) return;
    const pid_t victim = launchedProcessOfRank(launcher, 2);  // client 1
    if (victim > 0) killed = ::kill(victim, SIGKILL) == 0;
  };
  const auto r =
      federate("kill",
               {"--clients", "3", "--rounds", "28", "--strategy", "fedavg", "--local-steps", "2", "--node-speed",
                "160,160,160", "--max-restarts", "1", "--progress-seconds", "0.001", "--eval-every", "5"},
               o);
  ASSERT_TRUE(killed) << r.output;
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("client 1 died; left out of round"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("client 1 (rank 2)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("client 1 rejoined"), std::string::npos) << r.output;
  const auto rows = readRoundsCsv(dir_.file("kill/rounds.csv"));
  ASSERT_EQ(rows.size(), 84u);
  auto statusOf = [&](int64_t round, int client) {
    for (const auto& row : rows)
      if (row.round == round && row.client == client) return row.status;
    return std::string("missing");
  };
  int dead = 0;
  for (int64_t round = 0; round < 28; ++round) dead += statusOf(round, 1) == "dead";
  EXPECT_GE(dead, 1);
  EXPECT_EQ(statusOf(27, 1), "ok") << "client 1 rejoined before the end";
  for (int64_t round = 0; round < 28; ++round) EXPECT_EQ(statusOf(round, 0), "ok") << round;
}

// FedAvg with a deadline: client 2 is too slow to finish even one step by it (8 samples/s, 16 samples a step:
// 2 s > 1.5 s), so it stops at once and is left out as late; the others are not waited for beyond it.
TEST_F(FederatedProcess, ClientPastTheDeadlineIsLeftOutAsLate) {
  const auto r = federate("late", {"--clients", "3", "--rounds", "3", "--strategy", "fedavg", "--local-steps", "2",
                                   "--deadline-s", "1.5", "--node-speed", "2000,2000,8"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("client 2 missed the deadline"), std::string::npos) << r.output;
  const auto rows = readRoundsCsv(dir_.file("late/rounds.csv"));
  ASSERT_EQ(rows.size(), 9u);
  for (const auto& row : rows) {
    EXPECT_EQ(row.status, row.client == 2 ? "late" : "ok") << "round " << row.round << " client " << row.client;
    if (row.client == 2) {
      EXPECT_EQ(row.doneSteps, 0);
    }
  }
}

// fedbuff is asynchronous: the fast clients' updates make the server steps (2 per step) while the slow one
// trains, so its update arrives several versions late; staleness says by how many.
TEST_F(FederatedProcess, AsynchronousUpdatesRecordTheirStaleness) {
  const auto r = federate("buff", {"--clients", "3", "--rounds", "60", "--strategy", "fedbuff", "--buffer", "2",
                                   "--local-steps", "2", "--node-speed", "1600,1600,80", "--eval-every", "20"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::ifstream in(dir_.file("buff/rounds.csv"));
  std::string line;
  std::getline(in, line);
  std::set<int64_t> rounds;
  int64_t stalest = 0, slowUpdates = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
    ASSERT_EQ(cells.size(), 14u) << line;
    rounds.insert(std::stoll(cells[0]));
    if (cells[13] == "ok") stalest = std::max<int64_t>(stalest, std::stoll(cells[12]));
    slowUpdates += cells[5] == "2" && cells[13] == "ok";
  }
  EXPECT_EQ(rounds.size(), 60u) << "one record per server update";
  EXPECT_GE(slowUpdates, 1) << "the slow client's updates count too";
  EXPECT_GE(stalest, 2) << "the slow client's update is several versions old";
}

// Every sampled client evaluates the global model it receives on its held-out samples, before training: a row
// per client per evaluated round in client_eval.csv, over exactly its held-out count, and summary.json's
// federated accuracy is the sample-weighted mean of the last evaluated round's rows.
TEST_F(FederatedProcess, ClientsEvaluateTheGlobalModelOnTheirHeldOutSamples) {
  constexpr int kClients = 3;
  const auto r = federate("feval", {"--clients", "3", "--rounds", "2", "--strategy", "fedavg", "--model", "mlp",
                                    "--local-steps", "2", "--seed", "5", "--client-eval-fraction", "0.2"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  data::DataOptions dataOptions;
  dataOptions.source = "idx:" + dataDir_;
  const auto shards = federated::datasetShards(*data::openDataset(dataOptions).train, kClients, 0.5, 5);
  const auto rows = readCsvRows(dir_.file("feval/client_eval.csv"));
  ASSERT_EQ(rows.size(), 2u * kClients) << "rounds 0 and 1, every client";
  double correct = 0;
  int64_t samples = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    const int client = std::stoi(row.at("client"));
    EXPECT_EQ(row.at("round"), std::to_string(i / kClients));
    EXPECT_EQ(client, static_cast<int>(i % kClients));
    const int64_t n = std::stoll(row.at("samples"));
    EXPECT_EQ(n, federated::clientHeldOutCount(static_cast<int64_t>(shards[client].size()), 0.2)) << client;
    const double accuracy = std::stod(row.at("accuracy"));
    EXPECT_GE(accuracy, 0);
    EXPECT_LE(accuracy, 1);
    if (row.at("round") == "1") {
      correct += n * accuracy;
      samples += n;
    }
  }
  const auto summary = nlohmann::json::parse(readFile(dir_.file("feval/summary.json")))["federated_evaluation"];
  ASSERT_TRUE(summary.is_object()) << summary;
  EXPECT_EQ(summary["round"], 1);
  EXPECT_EQ(summary["samples"], samples);
  EXPECT_NEAR(summary["accuracy"].get<double>(), correct / samples, 1e-12);
  EXPECT_EQ(summary["per_client"].size(), 3u);
  EXPECT_NE(r.output.find("client accuracy"), std::string::npos) << r.output;
}

// --net-delay-ms / --net-bandwidth-mbps: client 1's link (150 ms, 40 Mbit/s) makes its task last at least the
// emulated download and upload of the mlp (0.44 MB at --width 0.5: 0.15 + 0.087 s each way), outside its
// training: the server's `seconds` minus the client's `compute_s` holds both. A bound that load cannot break (a
// busy CPU only adds time); without the emulation that share is milliseconds, as client 0's (not emulated).
TEST_F(FederatedProcess, SlowLinkAddsItsTransferTimeToTheClientsTasks) {
  const auto r =
      federate("link", {"--clients", "2", "--rounds", "1", "--strategy", "fedavg", "--local-steps", "1", "--eval-every",
                        "0", "--model", "mlp", "--net-delay-ms", "0,150", "--net-bandwidth-mbps", "0,40"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::array<double, 2> outsideTraining{-1, -1};  // per client: seconds - compute_s
  double oneWay = 0;                              // the emulated transfer of one model message
  for (const auto& row : readCsvRows(dir_.file("link/rounds.csv"))) {
    outsideTraining.at(std::stoi(row.at("client"))) = std::stod(row.at("seconds")) - std::stod(row.at("compute_s"));
    oneWay = 0.15 + std::stod(row.at("upload_bytes")) * 8 / 40e6;  // the model's, as the download's
  }
  ASSERT_GT(oneWay, 0.15 + 0.05) << "the mlp's message takes over 50 ms at 40 Mbit/s";
  std::cout << "outside training: client 0 " << outsideTraining[0] << " s, client 1 " << outsideTraining[1]
            << " s (2 x " << oneWay << " emulated)\n";
  EXPECT_GE(outsideTraining[0], 0);
  EXPECT_GE(outsideTraining[1], 2 * oneWay);
}

TEST_F(FederatedProcess, BadFlagsAreOneLineAndExitTwo) {
  expectOneLineError(federate("bad", {"--strategy", "fedsgd"}), "unknown --strategy 'fedsgd'", 2);
  expectOneLineError(federate("bad", {"--fraction", "0"}), "--fraction", 2);
  expectOneLineError(federate("bad", {"--alpha", "-1"}), "--alpha", 2);
  expectOneLineError(federate("bad", {"--local-steps", "5:2"}), "--local-steps", 2);
  expectOneLineError(federate("bad", {"--client-eval-fraction", "1"}), "--client-eval-fraction", 2);
  expectOneLineError(federate("bad", {"--server-opt", "sgd"}), "unknown --server-opt 'sgd'", 2);
  expectOneLineError(federate("bad", {"--clients", "3", "--node-speed", "100,100"}), "--node-speed", 2);
  expectOneLineError(federate("bad", {"--clients", "3", "--net-delay-ms", "1,2"}), "--net-delay-ms", 2);
  expectOneLineError(federate("bad", {"--data-dir", dir_.file("nothing")}), "", 2);
}

}  // namespace
}  // namespace balancenet::testing
