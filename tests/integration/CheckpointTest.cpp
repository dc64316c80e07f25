// Checkpoints end to end, real processes over loopback: k steps + resume + k steps ends with exactly the
// parameters of 2k steps straight; a damaged newest checkpoint is skipped with a warning; a checkpoint of
// another model, a missing one or a directory holding another run's is one error line, exit 2, and the
// directory is left byte for byte as it was.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <signal.h>

#include "BinaryFixture.h"
#include "balancenet/checkpoint/CheckpointFile.h"
#include "testing/ReferenceTraining.h"

namespace balancenet::testing {
namespace {

namespace fs = std::filesystem;

// Every file of a directory with its contents: to show that a failing run changed nothing.
std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) files[e.path().filename().string()] = readFile(e.path().string());
  return files;
}

void flipByteNearTheEnd(const std::string& path) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(-100, std::ios::end);
  const char c = static_cast<char>(f.get());
  f.seekp(-100, std::ios::end);
  f.put(static_cast<char>(c ^ 0x5a));
}

class Checkpoints : public BinaryFixture {
 protected:
  // Two workers whose split changes every 5 steps (random policy, deterministic in (seed, step)): resuming
  // needs the split in force from the checkpoint, not the initial one. Momentum and weight decay: the
  // optimiser state matters too. (A constant learning rate: a cosine schedule depends on --steps, so a run
  // of k steps is not the first half of one of 2k; the crash test below covers schedules.)
  std::vector<std::string> common(int64_t steps, const std::string& runDir, const std::string& dropout = "0") {
    return {"--nodes",
            "2",
            "--model",
            "mlp",
            "--width",
            "0.25",
            "--dropout",
            dropout,
            "--global-batch",
            "32",
            "--policy",
            "random",
            "--rebalance-every",
            "5",
            "--lr",
            "0.05",
            "--momentum",
            "0.9",
            "--weight-decay",
            "1e-4",
            "--steps",
            std::to_string(steps),
            "--run-dir",
            dir_.file(runDir),
            "--eval-every",
            "0"};
  }
  ProcessResult trainWith(std::vector<std::string> flags, const std::vector<std::string>& more) {
    flags.insert(flags.end(), more.begin(), more.end());
    return train(flags);
  }

  // 2k steps straight vs k, then resume to 2k: the max |difference| of the final parameters.
  // `more`: flags every run gets.
  double straightVsResumed(int64_t k, const std::string& dropout, std::vector<std::string> more = {}) {
    const auto with = [&more](std::vector<std::string> flags) {
      flags.insert(flags.end(), more.begin(), more.end());
      return flags;
    };
    const auto straight =
        trainWith(common(2 * k, "straight", dropout), with({"--save-params", dir_.file("straight.pt")}));
    EXPECT_EQ(straight.exitCode, 0) << straight.output;
    const std::string ckpt = dir_.file("ckpt");
    const auto first =
        trainWith(common(k, "first", dropout),
                  with({"--checkpoint-dir", ckpt, "--checkpoint-every", "5", "--keep-checkpoints", "2"}));
    EXPECT_EQ(first.exitCode, 0) << first.output;
    // Checkpoints at 5, 10, 15 and the last step; the newest two kept.
    EXPECT_EQ(snapshot(ckpt).size(), 3u);  // two checkpoints and the manifest
    EXPECT_TRUE(
        fs::exists(ckpt + "/step-" + std::string(8 - std::to_string(k).size(), '0') + std::to_string(k) + ".ckpt"));
    const auto resumed =
        trainWith(common(2 * k, "resumed", dropout),
                  with({"--checkpoint-dir", ckpt, "--resume", "--save-params", dir_.file("resumed.pt")}));
    lastResumedOutput_ = resumed.output;
    EXPECT_EQ(resumed.exitCode, 0) << resumed.output;
    EXPECT_NE(resumed.output.find("resumed from " + ckpt), std::string::npos) << resumed.output;
    // The resumed run's steps.csv covers its own steps: k .. 2k-1 on both ranks.
    const auto csv = readFile(dir_.file("resumed/steps.csv"));
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 2 * k) << csv;
    EXPECT_NE(csv.find("\n" + std::to_string(k) + ",0,"), std::string::npos) << csv;
    if (straight.exitCode != 0 || resumed.exitCode != 0) return 1e9;
    return maxAbsDifference(loadSavedParameters(dir_.file("straight.pt")),
                            loadSavedParameters(dir_.file("resumed.pt")));
  }
  std::string lastResumedOutput_;
};

TEST_F(Checkpoints, ResumeContinuesBitForBit) {
  const double diff = straightVsResumed(16, "0");
  std::printf("32 steps straight vs 16 + resume + 16: max |param difference| = %.3g\n", diff);
  EXPECT_LE(diff, 1e-6);
}

// --grad-compress keeps per rank what compression lost (and PowerSGD its Q): each rank's goes into the checkpoint
// and comes back, so even a lossy exchange resumes bit for bit. (Started from zero, the resumed run would differ.)
TEST_F(Checkpoints, ResumeWithCompressedGradientsContinuesBitForBit) {
  for (const char* kind : {"powersgd:2", "int8"}) {
    const double diff =
        straightVsResumed(8, "0", {"--comm", "allreduce", "--offload-below", "0", "--grad-compress", kind});
    std::printf("--grad-compress %s: 16 steps straight vs 8 + resume + 8: max |param difference| = %.3g\n", kind, diff);
    EXPECT_LE(diff, 1e-6) << kind;
    EXPECT_EQ(lastResumedOutput_.find("starts from zero"), std::string::npos) << lastResumedOutput_;
    fs::remove_all(dir_.file("ckpt"));
  }
}

// Dropout draws from each rank's own generator: restored per rank, even dropout continues exactly.
TEST_F(Checkpoints, ResumeWithDropoutContinuesBitForBit) {
  const double diff = straightVsResumed(8, "0.3");
  std::printf("16 steps straight vs 8 + resume + 8 with dropout: max |param difference| = %.3g\n", diff);
  EXPECT_LE(diff, 1e-6);
}

// A crash (the launcher killed, its workers with it) mid-run with a cosine schedule: resuming with the same
// flags ends where the uninterrupted run does. Paced to ~25 ms a step so that the kill lands mid-run.
TEST_F(Checkpoints, ResumeAfterACrashEndsWhereTheUninterruptedRunDoes) {
  auto flags = [&](const std::string& runDir) {
    auto f = common(40, runDir);
    f.insert(f.end(), {"--lr-decay", "cosine", "--node-speed", "800,800", "--checkpoint-every", "4"});
    return f;
  };
  const auto straight = trainWith(flags("straight"), {"--save-params", dir_.file("straight.pt")});
  ASSERT_EQ(straight.exitCode, 0) << straight.output;
  const std::string ckpt = dir_.file("ckpt");
  ProcessOptions killEarly;
  killEarly.whileRunning = [&](pid_t launcher, double) {
    if (fs::exists(ckpt + "/step-00000008.ckpt")) ::kill(launcher, SIGKILL);
  };
  auto crashFlags = flags("crashed");
  crashFlags.insert(crashFlags.end(), {"--checkpoint-dir", ckpt});
  const auto crashed = train(crashFlags, killEarly);
  ASSERT_EQ(crashed.exitCode, 128 + SIGKILL) << crashed.output;
  // Only complete checkpoints carry final names, whenever the kill came.
  for (const auto& e : fs::directory_iterator(ckpt)) {
    const auto name = e.path().filename().string();
    if (name.size() > 5 && name.substr(name.size() - 5) == ".ckpt") {
      EXPECT_NO_THROW(checkpoint::decode(readFile(e.path().string()))) << name;
    }
  }
  const auto resumed =
      trainWith(flags("resumed"), {"--checkpoint-dir", ckpt, "--resume", "--save-params", dir_.file("resumed.pt")});
  ASSERT_EQ(resumed.exitCode, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("resumed from " + ckpt), std::string::npos) << resumed.output;
  const double diff =
      maxAbsDifference(loadSavedParameters(dir_.file("straight.pt")), loadSavedParameters(dir_.file("resumed.pt")));
  std::printf("40 steps straight vs killed + resumed: max |param difference| = %.3g\n", diff);
  EXPECT_LE(diff, 1e-6);
}

TEST_F(Checkpoints, DamagedNewestCheckpointIsSkippedWithAWarning) {
  const std::string ckpt = dir_.file("ckpt");
  const auto first = trainWith(common(12, "first"), {"--checkpoint-dir", ckpt, "--checkpoint-every", "4"});
  ASSERT_EQ(first.exitCode, 0) << first.output;
  flipByteNearTheEnd(ckpt + "/step-00000012.ckpt");
  const auto resumed =
      trainWith(common(14, "resumed"), {"--checkpoint-dir", ckpt, "--checkpoint-every", "4", "--resume"});
  ASSERT_EQ(resumed.exitCode, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("step-00000012.ckpt is damaged (payload checksum mismatch); trying the one before it"),
            std::string::npos)
      << resumed.output;
  EXPECT_NE(resumed.output.find("resumed from " + ckpt + "/step-00000008.ckpt at step 8 of 14"), std::string::npos)
      << resumed.output;
  // The resumed run wrote step 12 again, whole, and its last step.
  const auto files = snapshot(ckpt);
  EXPECT_EQ(files.size(), 4u);
  EXPECT_TRUE(files.count("step-00000012.ckpt") && files.count("step-00000014.ckpt"));
  const auto again = trainWith(common(16, "again"), {"--checkpoint-dir", ckpt, "--resume"});
  EXPECT_EQ(again.exitCode, 0) << again.output;
  EXPECT_EQ(again.output.find("damaged"), std::string::npos) << again.output;
  EXPECT_NE(again.output.find("step-00000014.ckpt at step 14"), std::string::npos) << again.output;
}

TEST_F(Checkpoints, BadResumesAreOneLineErrorsAndTouchNothing) {
  const std::string ckpt = dir_.file("ckpt");
  const auto first = trainWith(common(3, "first"), {"--checkpoint-dir", ckpt});
  ASSERT_EQ(first.exitCode, 0) << first.output;
  const auto before = snapshot(ckpt);
  ASSERT_EQ(before.size(), 2u);  // step 3 and the manifest

  auto cnn = common(6, "cnn");
  cnn[3] = "cnn";
  const auto other = trainWith(cnn, {"--checkpoint-dir", ckpt, "--resume"});
  expectOneLineError(other, "is a checkpoint of mlp (6 tensors", 2);
  expectOneLineError(other, "this run trains cnn (", 2);
  expectOneLineError(trainWith(common(6, "wider"), {"--checkpoint-dir", ckpt, "--resume", "--width", "0.5"}),
                     "(tensor 0: layers.1.weight 64x784 vs layers.1.weight 128x784)", 2);
  expectOneLineError(trainWith(common(6, "adam"), {"--checkpoint-dir", ckpt, "--resume", "--optimizer", "adam"}),
                     "was trained with --optimizer sgd, this run uses adam", 2);
  expectOneLineError(trainWith(common(3, "done"), {"--checkpoint-dir", ckpt, "--resume"}),
                     "is at step 3, already at --steps 3", 2);
  // Without --resume another run must not mix its checkpoints with these (and prune them).
  expectOneLineError(trainWith(common(6, "fresh"), {"--checkpoint-dir", ckpt}), "already holds checkpoints", 2);
  EXPECT_EQ(snapshot(ckpt), before);

  expectOneLineError(trainWith(common(6, "empty"), {"--checkpoint-dir", dir_.file("nothing"), "--resume"}),
                     "--resume: no checkpoint in", 2);
  EXPECT_FALSE(fs::exists(dir_.file("nothing")));
  expectOneLineError(trainWith(common(6, "nodir"), {"--resume"}), "--resume needs --checkpoint-dir", 2);
  expectOneLineError(trainWith(common(6, "every"), {"--checkpoint-dir", dir_.file("x"), "--checkpoint-every", "0"}),
                     "--checkpoint-every must be at least 1", 2);
  expectOneLineError(trainWith(common(6, "ps"), {"--checkpoint-dir", dir_.file("x"), "--comm", "ps", "--ps", "1"}),
                     "does not work with --comm ps", 2);

  // Every checkpoint damaged: nothing to resume from, each one named.
  flipByteNearTheEnd(ckpt + "/step-00000003.ckpt");
  const auto damaged = snapshot(ckpt);
  const auto none = trainWith(common(6, "none"), {"--checkpoint-dir", ckpt, "--resume"});
  expectOneLineError(none, "none of the 1 checkpoints in " + ckpt + " is intact", 2);
  EXPECT_NE(none.output.find("step-00000003.ckpt is damaged"), std::string::npos) << none.output;
  EXPECT_EQ(snapshot(ckpt), damaged);
}

// Pipeline stages checkpoint the whole model block by block with each parameter's Adam state: k steps +
// resume + k steps ends where 2k steps straight end. A data-parallel run cannot resume it: one line, exit 2.
TEST_F(Checkpoints, PipelineStagesResumeBitForBit) {
  auto flags = [&](int64_t steps, const std::string& run) {
    return std::vector<std::string>{"--nodes",
                                    "2",
                                    "--pipeline-stages",
                                    "2",
                                    "--micro-batches",
                                    "2",
                                    "--model",
                                    "cnn",
                                    "--width",
                                    "0.25",
                                    "--global-batch",
                                    "16",
                                    "--optimizer",
                                    "adam",
                                    "--lr",
                                    "0.002",
                                    "--steps",
                                    std::to_string(steps),
                                    "--run-dir",
                                    dir_.file(run),
                                    "--eval-every",
                                    "0"};
  };
  const auto straight = trainWith(flags(8, "straight"), {"--save-params", dir_.file("straight.pt")});
  ASSERT_EQ(straight.exitCode, 0) << straight.output;
  const std::string ckpt = dir_.file("ckpt");
  const auto first = trainWith(flags(4, "first"), {"--checkpoint-dir", ckpt, "--checkpoint-every", "2"});
  ASSERT_EQ(first.exitCode, 0) << first.output;
  EXPECT_TRUE(fs::exists(ckpt + "/step-00000004.ckpt"));
  const auto resumed =
      trainWith(flags(8, "resumed"), {"--checkpoint-dir", ckpt, "--resume", "--save-params", dir_.file("resumed.pt")});
  ASSERT_EQ(resumed.exitCode, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("resumed from " + ckpt), std::string::npos) << resumed.output;
  const double diff =
      maxAbsDifference(loadSavedParameters(dir_.file("straight.pt")), loadSavedParameters(dir_.file("resumed.pt")));
  std::printf("pipeline, 8 steps straight vs 4 + resume + 4: max |param difference| = %.3g\n", diff);
  EXPECT_EQ(diff, 0.0);

  const auto before = snapshot(ckpt);
  auto dataParallel = flags(8, "dp");
  dataParallel[3] = "1";  // --pipeline-stages 1
  const auto refused = trainWith(dataParallel, {"--checkpoint-dir", ckpt, "--resume"});
  EXPECT_EQ(refused.exitCode, 2) << refused.output;
  EXPECT_NE(refused.output.find("is a checkpoint of a pipeline run, this run is data-parallel"), std::string::npos)
      << refused.output;
  EXPECT_EQ(snapshot(ckpt), before);
}

}  // namespace
}  // namespace balancenet::testing
