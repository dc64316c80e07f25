// Fault injection with real processes: a worker killed at a given step (BALANCENET_FAULT), also with
// checkpoints, with --sync-bn and with --shard-state, a worker that stalls (SIGSTOP), a worker the launcher
// restarts and that rejoins, a worker joining from outside (and one refused). Each run ends either completed with
// every sample trained, or stopped with the missing rank named, in bounded time, with no process left behind.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "BinaryFixture.h"
#include "testing/FloatBound.h"

namespace balancenet::testing {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kGlobalBatch = 30;

// Rows of steps.csv per step.
std::map<int64_t, int> ranksPerStep(const std::string& csv) {
  std::map<int64_t, int> rows;
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line))
    if (!line.empty()) ++rows[std::stoll(line.substr(0, line.find(',')))];
  return rows;
}

struct SplitRow {
  int64_t step;
  int rank;
  std::string note;
};

// splits.csv: step,policy,rank,batch,...,note (the note is the last column and holds no comma).
std::vector<SplitRow> splitRows(const std::string& csv) {
  std::vector<SplitRow> rows;
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> cells;
    std::istringstream cellsIn(line);
    for (std::string cell; std::getline(cellsIn, cell, ',');) cells.push_back(cell);
    rows.push_back({std::stoll(cells.at(0)), std::stoi(cells.at(2)), cells.back()});
  }
  return rows;
}

// `flags` with the value of `name` replaced.
std::vector<std::string> with(std::vector<std::string> flags, const std::string& name, const std::string& value) {
  auto it = std::find(flags.begin(), flags.end(), name);
  if (it == flags.end()) throw std::logic_error(name + " not in the flags");
  *(it + 1) = value;
  return flags;
}

class Faults : public BinaryFixture {
 protected:
  // A small exact run: no dropout, so any split gives the same parameters (up to summation order).
  std::vector<std::string> job(int nodes, int steps, const std::string& run) {
    return {"--nodes",
            std::to_string(nodes),
            "--model",
            "mlp",
            "--width",
            "0.25",
            "--dropout",
            "0",
            "--global-batch",
            std::to_string(kGlobalBatch),
            "--steps",
            std::to_string(steps),
            "--lr",
            "0.05",
            "--momentum",
            "0.9",
            "--progress-seconds",
            "0",
            "--run-dir",
            dir_.file(run),
            "--save-params",
            dir_.file(run + ".params")};
  }

  // Runs the launcher, remembering every worker it ever had; `act` may act on them while it runs.
  ProcessResult launch(const std::vector<std::string>& flags, std::map<std::string, std::string> env,
                       std::function<void(pid_t, double)> act = {}) {
    ProcessOptions o;
    o.env = std::move(env);
    o.timeoutSeconds = 120;
    o.whileRunning = [&](pid_t launcher, double elapsed) {
      for (pid_t w : childrenOf(launcher)) workers_.insert(w);
      if (act) act(launcher, elapsed);
    };
    return train(flags, o);
  }

  void expectNoOrphans() {
    EXPECT_FALSE(workers_.empty());
    for (pid_t w : workers_) EXPECT_FALSE(processAlive(w)) << "orphan worker " << w;
  }

  double maxParameterDifference(const std::string& a, const std::string& b) {
    auto pa = loadSavedParameters(dir_.file(a + ".params"));
    auto pb = loadSavedParameters(dir_.file(b + ".params"));
    EXPECT_EQ(pa.size(), pb.size());
    double worst = 0;
    for (size_t i = 0; i < std::min(pa.size(), pb.size()); ++i)
      worst = std::max(worst, (pa[i] - pb[i]).abs().max().item<double>());
    return worst;
  }

  // Runs the launcher and, once its job is up, a worker joining it from outside (`joiner`'s result).
  ProcessResult launchWithJoiner(const std::vector<std::string>& flags, ProcessResult& joiner) {
    std::thread joinerThread;
    // A single-machine job opens no port: the joiner finds it through the store file its launcher names.
    const std::string joinStore = dir_.file("run/join-store");
    auto r = launch(flags, {}, [&](pid_t, double elapsed) {
      if (elapsed > 2 && !joinerThread.joinable() && fs::exists(joinStore)) {
        auto storeFile = readFile(joinStore);
        while (!storeFile.empty() && storeFile.back() == '\n') storeFile.pop_back();
        auto joinFlags = flags;
        joinFlags.insert(joinFlags.end(), {"--join", "--store-file", storeFile, "--run-dir", dir_.file("joiner-run")});
        std::vector<std::string> argv{BALANCENET_BINARY, "train", "--data-dir", dataDir_, "--threads", "1"};
        argv.insert(argv.end(), joinFlags.begin(), joinFlags.end());
        joinerThread = std::thread([&joiner, argv] { joiner = runProcess(argv, ProcessOptions{}); });
      }
    });
    EXPECT_TRUE(joinerThread.joinable()) << r.output;
    if (joinerThread.joinable()) joinerThread.join();
    return r;
  }

  nlohmann::json summary(const std::string& run) {
    return nlohmann::json::parse(readFile(dir_.file(run + "/summary.json")));
  }

  std::set<pid_t> workers_;
};

TEST_F(Faults, ElasticJobSurvivesAKilledWorkerWithEverySampleTrained) {
  const int steps = 40;
  auto calm = launch(job(3, steps, "calm"), {});
  ASSERT_EQ(calm.exitCode, 0) << calm.output;
  auto flags = job(3, steps, "killed");
  flags.insert(flags.end(), {"--elastic", "--peer-timeout", "20"});
  auto r = launch(flags, {{"BALANCENET_FAULT", "1:15:kill"}});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_FALSE(r.timedOut);
  EXPECT_NE(r.output.find("worker rank 1 (pid"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("was killed by signal 9 (Killed); the job goes on with 2 workers"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("lost rank(s) 1"), std::string::npos) << r.output;

  const auto s = summary("killed");
  EXPECT_EQ(s["steps"], steps);
  EXPECT_EQ(s["samples_trained"].get<double>(), steps * kGlobalBatch);
  // Every step has the survivors' rows (the dead worker's went with it).
  const auto rows = ranksPerStep(readFile(dir_.file("killed/steps.csv")));
  EXPECT_EQ(rows.at(0), 2);
  EXPECT_EQ(rows.at(steps - 1), 2);
  EXPECT_EQ(static_cast<int>(rows.size()), steps);
  // Nothing learned was lost: the same parameters as the undisturbed run (the gradient of a global
  // batch does not depend on its split), and so the same accuracy.
  const double diff = maxParameterDifference("killed", "calm");
  const double bound = exactnessBound(loadSavedParameters(dir_.file("calm.params")), steps);
  std::printf("killed worker vs undisturbed run: max |param difference| = %.3g (float bound %.3g)\n", diff, bound);
  EXPECT_LT(diff, bound);
  EXPECT_NEAR(s["final_accuracy"].get<double>(), summary("calm")["final_accuracy"].get<double>(), 0.02);

  // splits.csv is one log of the whole run: the launched split at step 0, the re-form at the step the
  // survivors went on from, then their decisions (not a fresh file whose rows say step 0).
  const auto csv = readFile(dir_.file("killed/splits.csv"));
  const auto splits = splitRows(csv);
  ASSERT_FALSE(splits.empty()) << csv;
  EXPECT_EQ(splits.front().step, 0) << csv;
  EXPECT_EQ(std::count_if(splits.begin(), splits.end(), [](const SplitRow& r) { return r.note == "initial split"; }), 3)
      << csv;
  const auto change = std::find_if(splits.begin(), splits.end(),
                                   [](const SplitRow& r) { return r.note == "membership change: 3 -> 2 workers"; });
  ASSERT_NE(change, splits.end()) << csv;
  EXPECT_EQ(change->step, 15) << csv;  // killed after step 15: the survivors' committed state
  EXPECT_EQ(std::count_if(splits.begin(), splits.end(), [&](const SplitRow& r) { return r.note == change->note; }), 2)
      << csv;
  EXPECT_TRUE(std::is_sorted(splits.begin(), splits.end(), [](const SplitRow& a, const SplitRow& b) {
    return a.step < b.step;
  })) << csv;
  EXPECT_GE(splits.back().step, 35) << csv;  // the decisions after the re-form
  expectNoOrphans();
}

TEST_F(Faults, ElasticJobWithCheckpointsSurvivesAKillAndResumesFromTheReformedGroupsCheckpoint) {
  const std::string ckpt = dir_.file("ckpt");
  auto flags = job(3, 30, "killed");
  flags.insert(flags.end(),
               {"--elastic", "--peer-timeout", "20", "--checkpoint-dir", ckpt, "--checkpoint-every", "10"});
  auto r = launch(flags, {{"BALANCENET_FAULT", "1:15:kill"}});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("lost rank(s) 1"), std::string::npos) << r.output;
  for (const char* file : {"step-00000010.ckpt", "step-00000020.ckpt", "step-00000030.ckpt"})
    EXPECT_TRUE(fs::exists(ckpt + "/" + file)) << file << "\n" << r.output;
  EXPECT_EQ(summary("killed")["samples_trained"].get<double>(), 30 * kGlobalBatch);

  // The checkpoint after the re-form is the two survivors': two workers resume it as their own (no
  // warning about another worker count), with the split and the policy's state it holds.
  auto resumeFlags = job(2, 40, "resumed");
  resumeFlags.insert(resumeFlags.end(), {"--checkpoint-dir", ckpt, "--resume"});
  const auto resumed = launch(resumeFlags, {});
  ASSERT_EQ(resumed.exitCode, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("step-00000030.ckpt at step 30 of 40"), std::string::npos) << resumed.output;
  EXPECT_EQ(resumed.output.find("was written by"), std::string::npos) << resumed.output;
  EXPECT_EQ(summary("resumed")["steps"], 40);
  expectNoOrphans();
}

TEST_F(Faults, ElasticJobWithSyncBatchNormSurvivesAKilledWorker) {
  const int steps = 12;
  auto flags = with(with(job(3, steps, "run"), "--model", "resnet18"), "--width", "0.125");
  flags.insert(flags.end(), {"--sync-bn", "--elastic", "--peer-timeout", "20"});
  auto r = launch(flags, {{"BALANCENET_FAULT", "1:5:kill"}});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("lost rank(s) 1"), std::string::npos) << r.output;
  const auto s = summary("run");
  EXPECT_EQ(s["steps"], steps);
  EXPECT_EQ(s["samples_trained"].get<double>(), steps * kGlobalBatch);
  expectNoOrphans();
}

TEST_F(Faults, WithoutElasticAKilledWorkerStopsTheJobNamingIt) {
  auto flags = job(3, 400, "run");
  flags.insert(flags.end(), {"--stall-timeout", "30"});
  auto r = launch(flags, {{"BALANCENET_FAULT", "1:5:kill"}});
  expectOneLineError(r, "worker rank 1 (pid", 1);
  EXPECT_NE(r.output.find("was killed by signal 9"), std::string::npos) << r.output;
  // The survivors say who is missing and where, well before the stall timeout.
  EXPECT_NE(r.output.find("[rank 0] balancenet: error: step 5: rank 1 has not contributed for"), std::string::npos)
      << r.output;
  EXPECT_LT(r.seconds, 25);
  expectNoOrphans();
}

TEST_F(Faults, StalledWorkerIsNamedByEveryRankAndTheJobStops) {
  auto flags = job(3, 400, "run");
  flags.insert(flags.end(), {"--stall-timeout", "6"});
  auto r = launch(flags, {{"BALANCENET_FAULT", "2:5:stop"}});
  EXPECT_FALSE(r.timedOut) << r.output;
  EXPECT_EQ(r.exitCode, 1) << r.output;
  for (int rank : {0, 1})
    EXPECT_NE(r.output.find(fmt::format("[rank {}] balancenet: error: step 5: rank 2 has not contributed for", rank)),
              std::string::npos)
        << r.output;
  EXPECT_NE(r.output.find("(last at step 5)"), std::string::npos) << r.output;
  EXPECT_LT(r.seconds, 6 + 25);
  expectNoOrphans();  // the stopped worker too
}

TEST_F(Faults, RestartedWorkerRejoinsAndTrainsToTheEnd) {
  const int steps = 60;
  auto flags = job(3, steps, "run");
  // Paced steps (at least 50 ms each) leave the restarted process time to start and join.
  flags.insert(flags.end(),
               {"--elastic", "--max-restarts", "1", "--peer-timeout", "20", "--node-speed", "200,200,200"});
  auto r = launch(flags, {{"BALANCENET_FAULT", "1:10:kill"}});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("restarted worker rank 1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("joined rank(s) 1"), std::string::npos) << r.output;
  const auto s = summary("run");
  EXPECT_EQ(s["samples_trained"].get<double>(), steps * kGlobalBatch);
  const auto rows = ranksPerStep(readFile(dir_.file("run/steps.csv")));
  EXPECT_EQ(static_cast<int>(rows.size()), steps);
  EXPECT_EQ(rows.at(0), 2);          // the first incarnation's rows went with it
  EXPECT_EQ(rows.at(steps - 1), 3);  // the restarted worker's rows start at its join
  EXPECT_EQ(workers_.size(), 4u);    // three launched, one restarted
  expectNoOrphans();
}

// --shard-state: a worker holds only its slice of the optimiser state, so a killed worker's slice is gone. The
// survivors go back to the newest checkpoint (step 10, every slice in it) and re-slice the state over themselves by
// their caps; the restarted worker joins at a step boundary, where the members gather the whole state and slice it
// over three again. Nothing learned is lost: the parameters are those of the sharded run never disturbed.
TEST_F(Faults, ElasticShardedStateGoesBackToItsCheckpointWhenAWorkerDiesAndReslicesForAJoiner) {
  const int steps = 40;
  const std::vector<std::string> sharded{"--shard-state", "--memory-limit-mb", "300,200,100", "--node-speed",
                                         "200,200,200"};
  auto calmFlags = job(3, steps, "calm");
  calmFlags.insert(calmFlags.end(), sharded.begin(), sharded.end());
  auto calm = launch(calmFlags, {});
  ASSERT_EQ(calm.exitCode, 0) << calm.output;
  auto flags = job(3, steps, "killed");
  flags.insert(flags.end(), sharded.begin(), sharded.end());
  flags.insert(flags.end(), {"--elastic", "--peer-timeout", "20", "--max-restarts", "1", "--checkpoint-dir",
                             dir_.file("ckpt"), "--checkpoint-every", "10"});
  workers_.clear();  // the calm run's
  auto r = launch(flags, {{"BALANCENET_FAULT", "1:15:kill"}});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("going on from step 10; lost rank(s) 1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--shard-state: the group went back to the checkpoint of step 10, which holds every slice"),
            std::string::npos)
      << r.output;
  // Over the two survivors by their caps (300 and 100 MB), then over three again once rank 1 is back.
  EXPECT_NE(r.output.find("in slices of 39514, 13136"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("joined rank(s) 1"), std::string::npos) << r.output;
  const auto s = summary("killed");
  EXPECT_EQ(s["steps"], steps);
  EXPECT_EQ(s["samples_trained"].get<double>(), steps * kGlobalBatch);
  EXPECT_EQ(static_cast<int>(ranksPerStep(readFile(dir_.file("killed/steps.csv"))).size()), steps);
  const double diff = maxParameterDifference("killed", "calm");
  const double bound = exactnessBound(loadSavedParameters(dir_.file("calm.params")), steps);
  std::printf("sharded, killed and rejoined vs undisturbed: max |param difference| = %.3g (float bound %.3g)\n", diff,
              bound);
  EXPECT_LT(diff, bound);
  EXPECT_EQ(workers_.size(), 4u);  // three launched, one restarted
  expectNoOrphans();
}

// A worker killed before the first checkpoint: its slice is nowhere, and the job stops in one line, in bounded time.
TEST_F(Faults, ElasticShardedStateWithoutACheckpointYetStopsInOneLine) {
  auto flags = job(3, 40, "killed");
  flags.insert(flags.end(), {"--shard-state", "--elastic", "--peer-timeout", "20", "--checkpoint-dir",
                             dir_.file("ckpt"), "--checkpoint-every", "30"});
  auto r = launch(flags, {{"BALANCENET_FAULT", "1:5:kill"}});
  EXPECT_FALSE(r.timedOut) << r.output;
  EXPECT_NE(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("step 5: a lost worker's slice of the optimiser state (--shard-state) is in no checkpoint "
                          "yet: the job stops"),
            std::string::npos)
      << r.output;
  EXPECT_LT(r.seconds, 60) << r.output;
  expectNoOrphans();
}

// Pipeline stages cannot go on without one of theirs: with --max-restarts and --checkpoint-dir the launcher
// restarts the whole job from the newest checkpoint, and it ends where the job that was never killed ends.
TEST_F(Faults, KilledPipelineStageRestartsTheJobFromItsCheckpointAndEndsExactly) {
  const int steps = 12;
  auto pipelined = [&](const std::string& run) {
    auto flags = with(job(2, steps, run), "--model", "cnn");
    flags.insert(flags.end(), {"--pipeline-stages", "2", "--micro-batches", "2", "--optimizer", "adam", "--lr", "0.002",
                               "--checkpoint-dir", dir_.file(run + "-ckpt"), "--checkpoint-every", "3"});
    return flags;
  };
  auto straight = launch(pipelined("straight"), {});
  ASSERT_EQ(straight.exitCode, 0) << straight.output;
  auto flags = pipelined("run");
  flags.insert(flags.end(), {"--max-restarts", "1"});
  workers_.clear();  // the straight run's
  // Stage 1 dies after step 7: the newest checkpoint is step 6's.
  auto r = launch(flags, {{"BALANCENET_FAULT", "1:7:kill"}});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("restarting the whole job from its newest checkpoint (attempt 1, 0 restarts left)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("resumed from " + dir_.file("run-ckpt") + "/step-00000006.ckpt"), std::string::npos)
      << r.output;
  EXPECT_EQ(workers_.size(), 4u);  // two launched, both started again
  EXPECT_EQ(maxParameterDifference("straight", "run"), 0.0);
  expectNoOrphans();

  // Without a checkpoint directory there is nothing to restart from: one line before any worker starts.
  auto refused = train({"--nodes", "2", "--pipeline-stages", "2", "--max-restarts", "1", "--steps", "2"});
  EXPECT_EQ(refused.exitCode, 2) << refused.output;
  EXPECT_NE(refused.output.find("--max-restarts with --pipeline-stages restarts the whole job from its newest "
                                "checkpoint: give --checkpoint-dir"),
            std::string::npos)
      << refused.output;
}

TEST_F(Faults, WorkerJoiningFromOutsideTrainsAfterItsJoin) {
  const int steps = 120;
  auto flags = job(2, steps, "run");
  flags.insert(flags.end(), {"--elastic", "--max-nodes", "3", "--node-speed", "200,200"});
  ProcessResult joiner;
  auto r = launchWithJoiner(flags, joiner);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(joiner.exitCode, 0) << joiner.output;
  EXPECT_NE(r.output.find("joined rank(s) 2"), std::string::npos) << r.output << joiner.output;
  const auto rows = ranksPerStep(readFile(dir_.file("run/steps.csv")));
  EXPECT_EQ(rows.at(0), 2);
  EXPECT_EQ(rows.at(steps - 1), 3);  // the joiner's rank appears after its join
  EXPECT_EQ(summary("run")["samples_trained"].get<double>(), steps * kGlobalBatch);
  expectNoOrphans();
}

TEST_F(Faults, WorkerJoiningWhileTheMembersEvaluateTrainsAfterItsJoin) {
  // --eval-every 1: every step boundary, where a joiner is admitted, comes with an evaluation (collectives
  // of its own). Members and joiner must agree on which of the two the new group does first.
  const int steps = 120;
  auto flags = job(2, steps, "run");
  flags.insert(flags.end(), {"--elastic", "--max-nodes", "3", "--node-speed", "200,200", "--eval-every", "1",
                             "--peer-timeout", "20"});
  ProcessResult joiner;
  auto r = launchWithJoiner(flags, joiner);
  ASSERT_EQ(r.exitCode, 0) << r.output << joiner.output;
  EXPECT_EQ(joiner.exitCode, 0) << joiner.output;
  EXPECT_NE(r.output.find("joined rank(s) 2"), std::string::npos) << r.output << joiner.output;
  const auto rows = ranksPerStep(readFile(dir_.file("run/steps.csv")));
  EXPECT_EQ(rows.at(steps - 1), 3);
  EXPECT_EQ(summary("run")["samples_trained"].get<double>(), steps * kGlobalBatch);
  // One evaluation after every step (and the final one), none lost or repeated across the join.
  std::vector<int64_t> evaluated;
  const auto written = summary("run");  // a named copy: a range-for over a temporary's member dangles
  for (const auto& e : written["evaluations"]) evaluated.push_back(e["step"].get<int64_t>());
  ASSERT_FALSE(evaluated.empty());
  for (size_t i = 0; i + 1 < evaluated.size(); ++i) EXPECT_EQ(evaluated[i], static_cast<int64_t>(i + 1));
  EXPECT_EQ(evaluated.back(), steps);
  expectNoOrphans();
}

TEST_F(Faults, WorkerJoiningBeyondTheGlobalBatchIsRefusedAndTheJobGoesOn) {
  const int steps = 100;
  // Two workers, two samples per step: a third would get none. Paced steps (100 ms) outlast the join.
  auto flags = with(job(2, steps, "run"), "--global-batch", "2");
  flags.insert(flags.end(), {"--elastic", "--node-speed", "10,10"});
  ProcessResult joiner;
  auto r = launchWithJoiner(flags, joiner);
  expectOneLineError(joiner, "rank 2 was refused: the job has 2 workers, one per sample of --global-batch 2", 1);
  EXPECT_LT(joiner.seconds, 30) << joiner.output;  // at once, not after the join timeout
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("rank 2 refused"), std::string::npos) << r.output;
  EXPECT_EQ(summary("run")["samples_trained"].get<double>(), steps * 2);
  expectNoOrphans();
}

}  // namespace
}  // namespace balancenet::testing
