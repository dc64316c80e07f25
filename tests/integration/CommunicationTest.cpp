// The communication flags end to end: per-layer bytes, the Chrome trace, the explanation, and compare
// running communication variants side by side.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "BinaryFixture.h"
#include "CsvRows.h"

namespace balancenet::testing {
namespace {

class Communication : public BinaryFixture {};

// --probe-peers k: each worker probes its k peers, and the latencies reach splits.csv (the Python session's side is
// tests/python/test_outputs.py). The last decision's, so that the first link round has surely ended.
TEST_F(Communication, ProbePeersReportsEveryWorkersLatencyInSplitsCsv) {
  auto r = train({"--nodes", "3", "--model", "mlp", "--global-batch", "48", "--steps", "40", "--policy", "bno",
                  "--rebalance-every", "5", "--probe-peers", "1", "--eval-samples", "0"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const auto rows = readCsvRows(dir_.file("run/splits.csv"));
  ASSERT_FALSE(rows.empty());
  const std::string last = rows.back().at("step");
  int ranks = 0;
  for (const auto& row : rows) {
    if (row.at("step") != last) continue;
    ++ranks;
    EXPECT_GT(std::stod(row.at("mean_latency_ms")), 0) << "rank " << row.at("rank") << " at step " << last;
  }
  EXPECT_EQ(ranks, 3);
}

// --grad-compress bf16 end to end: the same steps cross the wire in half the bytes, each layer's too, the explanation
// says so, and the loss stays within bf16's reach of the exact run's. (--offload-below 0: the small share would be
// handed over to its peer, and a hand-over travels float32.)
TEST_F(Communication, Bf16OnTheWireHalvesEveryStepsBytes) {
  const std::vector<std::string> common{"--nodes",        "2", "--split",         "12,4", "--model", "mlp",
                                        "--steps",        "3", "--global-batch",  "16",   "--comm",  "allreduce",
                                        "--eval-samples", "0", "--offload-below", "0"};
  auto exact = common;
  exact.insert(exact.end(), {"--run-dir", dir_.file("exact")});
  ASSERT_EQ(train(exact).exitCode, 0);
  auto compressed = common;
  compressed.insert(compressed.end(), {"--grad-compress", "bf16", "--explain-comm"});
  const auto r = train(compressed);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("sent as bf16 with error feedback"), std::string::npos) << r.output;
  const auto steps = readCsvRows(dir_.file("run/steps.csv")), exactSteps = readCsvRows(dir_.file("exact/steps.csv"));
  ASSERT_EQ(steps.size(), exactSteps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    const double ratio = std::stod(steps[i].at("bytes_sent")) / std::stod(exactSteps[i].at("bytes_sent"));
    EXPECT_NEAR(ratio, 0.5, 1e-3) << "row " << i << ": " << steps[i].at("bytes_sent") << " against "
                                  << exactSteps[i].at("bytes_sent");  // the loss beside them stays float32
    EXPECT_NEAR(std::stod(steps[i].at("loss")), std::stod(exactSteps[i].at("loss")), 0.01) << "row " << i;
  }
  const auto layers = readCsvRows(dir_.file("run/layers.csv")),
             exactLayers = readCsvRows(dir_.file("exact/layers.csv"));
  ASSERT_EQ(layers.size(), exactLayers.size());
  EXPECT_EQ(std::stoll(layers[0].at("bytes_sent")) * 2, std::stoll(exactLayers[0].at("bytes_sent")));
  // Under auto, the candidates are the two ring exchanges, named by their wire type in summary.json.
  auto automatic = common;
  std::replace(automatic.begin(), automatic.end(), std::string("allreduce"), std::string("auto"));
  automatic.insert(automatic.end(), {"--grad-compress", "bf16", "--run-dir", dir_.file("auto")});
  const auto a = train(automatic);
  ASSERT_EQ(a.exitCode, 0) << a.output;
  const auto summary = nlohmann::json::parse(readFile(dir_.file("auto/summary.json")));
  EXPECT_EQ(summary["comm_auto"]["candidates"], nlohmann::json({"allreduce+bf16", "flat+bf16"})) << summary.dump();
}

// --comm auto --allow-lossy-comm on a slow link (the emulated 100 Mbit/s: the exact exchange is most of a step): the
// lossy candidates join the trial, from bf16 to PowerSGD, and one of them wins by more than kLossyMargin, its gain over
// the fastest exact exchange in summary.json and the log, the float32 ones dropped from the trial after a round.
// (ModeTrialTest: a lossy one that only ties does not win.)
TEST_F(Communication, AutoWithLossyAllowedPicksCompressionOnASlowLink) {
  const auto r = train({"--nodes", "2", "--model", "mlp", "--steps", "34", "--global-batch", "32", "--threads", "1",
                        "--comm", "auto", "--allow-lossy-comm", "--net-bandwidth-mbps", "100,100", "--eval-samples",
                        "0", "--offload-below", "0"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const auto summary = nlohmann::json::parse(readFile(dir_.file("run/summary.json")));
  const auto& autoChoice = summary["comm_auto"];
  EXPECT_EQ(autoChoice["candidates"], nlohmann::json({"allreduce", "flat", "hd", "a2a", "allreduce+bf16", "flat+bf16",
                                                      "allreduce+int8", "allreduce+powersgd:4"}))
      << autoChoice.dump();
  const std::string chosen = autoChoice["chosen"];
  EXPECT_NE(chosen.find('+'), std::string::npos) << "an exact exchange won on a 100 Mbit/s link: " << autoChoice.dump();
  EXPECT_GT(autoChoice["gain_over_exact"].get<double>(), 1.1) << autoChoice.dump();
  // The float32 exchanges, several times the compressed steps, ran one measured round each, not three.
  const auto& dropped = autoChoice["decisions"][0]["dropped"];
  EXPECT_NE(std::find(dropped.begin(), dropped.end(), "allreduce"), dropped.end()) << autoChoice.dump();
  EXPECT_LT(autoChoice["trial_steps"].get<int>(), 32) << autoChoice.dump();
  EXPECT_NE(r.output.find("x the fastest exact exchange"), std::string::npos) << r.output;
}

// The trace goes into a directory that does not exist yet (made, as --run-dir is); the run ends with each rank's
// medians.
TEST_F(Communication, TimelineLayersAndExplanation) {
  const std::string tracePath = dir_.file("traces/new/trace.json");
  auto r = train({"--nodes", "2", "--model", "mlp", "--steps", "4", "--global-batch", "16", "--threads", "1",
                  "--bucket-mb", "0.1", "--explain-comm", "--timeline", tracePath});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("per rank, medians of steps 2-3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rank 1: 8 samples, compute"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("bucket 0:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("overlapped with backward"), std::string::npos) << r.output;

  const auto trace = nlohmann::json::parse(readFile(tracePath));
  std::set<std::string> names;
  std::set<int> ranks;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    names.insert(e["name"].get<std::string>().substr(0, 20));
    ranks.insert(e["pid"].get<int>());
    EXPECT_GE(e["ts"].get<int64_t>(), 0);
  }
  EXPECT_EQ(ranks, (std::set<int>{0, 1}));
  for (const char* name : {"forward", "backward", "synchronize", "optimizer", "all-reduce bucket 0 "})
    EXPECT_TRUE(names.count(std::string(name).substr(0, 20))) << name;

  const auto layers = readFile(dir_.file("run/layers.csv"));
  EXPECT_EQ(layers.rfind("step,rank,layer,method,bytes_sent,bytes_received\n", 0), 0u);
  EXPECT_NE(layers.find("3,1,layers."), std::string::npos) << layers.substr(0, 300);  // every step, every rank
  EXPECT_NE(layers.find(",allreduce,"), std::string::npos);
  // --comm auto (the default) tries the exchanges in turn on steps 0-3: buckets, ring, halving-doubling,
  // all-to-all; every one reports its layers.
  EXPECT_NE(layers.find("2,0,layers.1,hd,"), std::string::npos) << layers;
  EXPECT_NE(layers.find("3,0,layers.1,a2a,"), std::string::npos) << layers;
  EXPECT_NE(r.output.find("auto: tries allreduce, flat, hd, a2a"), std::string::npos) << r.output;
}

TEST_F(Communication, CompareRunsVariantsSideBySide) {
  auto r = run({"compare",
                "--models",
                "mlp",
                "--policies",
                "equal",
                "--steps",
                "4",
                "--out",
                dir_.file("cmp"),
                "--variant",
                "overlap=--comm allreduce",
                "--variant",
                "no-overlap=--no-overlap",
                "--nodes",
                "2",
                "--global-batch",
                "16",
                "--data-dir",
                dataDir_,
                "--threads",
                "1"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const auto csv = readFile(dir_.file("cmp/compare.csv"));
  EXPECT_NE(csv.find("mean_sync_ms,bytes_sent_per_step"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nmlp,overlap,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nmlp,no-overlap,"), std::string::npos) << csv;
}

}  // namespace
}  // namespace balancenet::testing
