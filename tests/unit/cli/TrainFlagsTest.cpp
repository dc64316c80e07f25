// parseTrainCommandLine: the train flags become a validated JobConfig, or one UsageError line naming the flag.
#include "balancenet/cli/flags/TrainFlags.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include <fmt/format.h>

#include "balancenet/core/EnvironmentVariables.h"
#include "testing/LauncherViewTest.h"
#include "testing/UsageErrors.h"

namespace balancenet::cli {
using job::kAutoStages;
namespace {

using balancenet::testing::expectOneLineUsageError;
using balancenet::testing::usageErrorOf;

class TrainFlags : public LauncherViewTest {};

void expectTrainRefused(const std::vector<std::string>& args, const std::string& fragment) {
  expectOneLineUsageError([&] { parseTrainCommandLine(args); }, fragment);
}

TEST_F(TrainFlags, DefaultsAreOneWorkerAutoCommAndTheBalancedPolicy) {
  const auto c = parseTrainCommandLine({});
  EXPECT_EQ(c.launch.worldSize(), 1);
  EXPECT_EQ(c.comm.mode, comm::CommMode::Auto);
  EXPECT_EQ(c.orchestration.policy, "balanced");
  EXPECT_EQ(c.split.batches, std::vector<int64_t>{c.trainer.globalBatch});
  EXPECT_FALSE(c.worker.has_value());
  EXPECT_EQ(c.argv, (std::vector<std::string>{"balancenet", "train"}));
}

TEST_F(TrainFlags, WorkerFlagsAndTheirOlderNodeSpellingsAreTheSame) {
  EXPECT_EQ(parseTrainCommandLine({"--workers", "3"}).launch.nprocPerNode, 3);
  EXPECT_EQ(parseTrainCommandLine({"--nodes", "3"}).launch.nprocPerNode, 3);
  const auto elastic = parseTrainCommandLine({"--workers", "3", "--elastic", "--min-nodes", "2", "--max-workers", "5"});
  EXPECT_EQ(elastic.resilience.minNodes, 2);
  EXPECT_EQ(elastic.resilience.maxNodes, 5);
  const auto hosts = parseTrainCommandLine({"--hosts", "2", "--host-rank", "1", "--master-port", "29500"});
  EXPECT_EQ(hosts.launch.nnodes, 2);
  EXPECT_EQ(hosts.launch.nodeRank, 1);
}

// --data-dir is --data idx:DIR; both at once would silently train on the directory, whatever the order.
TEST_F(TrainFlags, DataAndDataDirAreOneChoice) {
  EXPECT_EQ(parseTrainCommandLine({"--data", "text:corpus.txt"}).data.source, "text:corpus.txt");
  EXPECT_EQ(parseTrainCommandLine({"--data-dir", "/d"}).data.source, "idx:/d");
  expectTrainRefused({"--data-dir", "/d", "--data", "text:corpus.txt"}, "--data excludes --data-dir");
  expectTrainRefused({"--data", "text:corpus.txt", "--data-dir", "/d"}, "--data excludes --data-dir");
}

TEST_F(TrainFlags, ExplicitZeroWorkersIsRefusedNotTheDefault) {
  expectTrainRefused({"--workers", "0"}, "--workers must be at least 1, got 0");
  expectTrainRefused({"--nodes", "0"}, "--workers must be at least 1, got 0");
  expectTrainRefused({"--nodes", "-2"}, "--workers must be at least 1, got -2");
}

TEST_F(TrainFlags, SlowdownBelowOneIsRefused) {
  expectTrainRefused({"--workers", "2", "--slowdown", "0.5,1"}, "--slowdown factors must be at least 1");
  expectTrainRefused({"--workers", "2", "--slowdown", "1,1", "--slowdown-schedule", "10=1,0.5"},
                     "--slowdown factors must be at least 1");
  EXPECT_FALSE(parseTrainCommandLine({"--workers", "2", "--slowdown", "1,4"}).emulation.slowdown.empty());
}

TEST_F(TrainFlags, OptimizerAndScheduleValuesOutOfRangeAreRefused) {
  expectTrainRefused({"--lr-min", "-0.1"}, "--lr-min must be in [0, --lr 0.05], got -0.1");
  expectTrainRefused({"--lr", "0.1", "--lr-min", "0.2"}, "--lr-min must be in [0, --lr 0.1], got 0.2");
  expectTrainRefused({"--lr-gamma", "0"}, "--lr-gamma must be in (0, 1], got 0");
  expectTrainRefused({"--lr-gamma", "1.5"}, "--lr-gamma must be in (0, 1], got 1.5");
  expectTrainRefused({"--lr-step-every", "0"}, "--lr-step-every must be at least 1, got 0");
  expectTrainRefused({"--momentum", "1"}, "--momentum must be in [0, 1), got 1");
  expectTrainRefused({"--momentum", "-0.5"}, "--momentum must be in [0, 1), got -0.5");
  expectTrainRefused({"--weight-decay", "-1e-4"}, "--weight-decay must not be negative, got -0.0001");
  const auto ok =
      parseTrainCommandLine({"--lr-min", "0.01", "--lr-gamma", "1", "--momentum", "0", "--weight-decay", "0"});
  EXPECT_DOUBLE_EQ(ok.trainer.lr.minLr, 0.01);
}

// --grad-compress: none by default; every kind with the ring exchanges (and auto, which then tries only those);
// --compress-warmup and --no-error-feedback only with a compression; --allow-lossy-comm only with auto.
TEST_F(TrainFlags, GradCompressReachesTheExchangeOrIsRefusedWhereItCannotWork) {
  EXPECT_EQ(parseTrainCommandLine({}).comm.compression.kind, compression::GradCompression::None);
  EXPECT_FALSE(parseTrainCommandLine({}).comm.allowLossy);
  for (const char* mode : {"auto", "allreduce", "flat"})
    EXPECT_EQ(
        parseTrainCommandLine({"--workers", "2", "--comm", mode, "--grad-compress", "bf16"}).comm.compression.kind,
        compression::GradCompression::Bf16)
        << mode;
  const auto powersgd =
      parseTrainCommandLine({"--workers", "2", "--grad-compress", "powersgd:2", "--compress-warmup", "50"});
  EXPECT_EQ(powersgd.comm.compression.kind, compression::GradCompression::PowerSgd);
  EXPECT_EQ(powersgd.comm.compression.rank, 2);
  EXPECT_EQ(powersgd.comm.compression.warmupSteps, 50);
  EXPECT_EQ(parseTrainCommandLine({"--grad-compress", "int8"}).comm.compression.kind,
            compression::GradCompression::Int8);
  EXPECT_TRUE(parseTrainCommandLine({"--allow-lossy-comm"}).comm.allowLossy);
  EXPECT_TRUE(parseTrainCommandLine({"--grad-compress", "int8"}).comm.compression.errorFeedback);
  EXPECT_FALSE(
      parseTrainCommandLine({"--grad-compress", "int8", "--no-error-feedback"}).comm.compression.errorFeedback);
  expectTrainRefused({"--no-error-feedback"}, "--no-error-feedback is for --grad-compress");
  expectTrainRefused({"--grad-compress", "int4"},
                     "--grad-compress must be none, bf16, fp16, int8, powersgd or "
                     "powersgd:RANK, got 'int4'");
  expectTrainRefused({"--grad-compress", "powersgd:0"}, "--grad-compress powersgd:RANK needs a RANK of 1 or more");
  expectTrainRefused({"--compress-warmup", "10"}, "--compress-warmup is for --grad-compress");
  expectTrainRefused({"--grad-compress", "int8", "--compress-warmup", "-1"},
                     "--compress-warmup must not be negative, got -1");
  for (const char* mode : {"hd", "a2a", "sfb", "hybrid"})
    expectTrainRefused({"--workers", "2", "--comm", mode, "--grad-compress", "fp16"},
                       fmt::format("--grad-compress is for --comm allreduce, flat, auto or ps (got --comm {})", mode));
  EXPECT_EQ(parseTrainCommandLine({"--workers", "2", "--comm", "ps", "--ps", "1", "--grad-compress", "int8"})
                .comm.compression.kind,
            compression::GradCompression::Int8);
  expectTrainRefused({"--workers", "2", "--comm", "ps", "--ps", "1", "--grad-compress", "powersgd"},
                     "--grad-compress powersgd is not for --comm ps");
  expectTrainRefused(
      {"--workers", "2", "--comm", "ps", "--ps", "1", "--grad-compress", "bf16", "--compress-warmup", "5"},
      "--compress-warmup is not for --comm ps");
  expectTrainRefused({"--comm", "flat", "--allow-lossy-comm"},
                     "--allow-lossy-comm is for --comm auto (got --comm flat)");
  expectTrainRefused({"--workers", "2", "--pipeline-stages", "2", "--grad-compress", "bf16"},
                     "--grad-compress is not yet with --pipeline-stages");
}

// --precision: fp32 by default; bf16 and fp16 reach the trainer; fp16 with the parameter servers (they update, so
// the workers cannot unscale) and either low type with factor layers or pipeline stages are refused in one line.
TEST_F(TrainFlags, PrecisionReachesTheTrainerOrIsRefusedWhereItCannotWork) {
  EXPECT_EQ(parseTrainCommandLine({}).trainer.precision, precision::Precision::Fp32);
  EXPECT_EQ(parseTrainCommandLine({"--precision", "bf16"}).trainer.precision, precision::Precision::Bf16);
  EXPECT_EQ(parseTrainCommandLine({"--precision", "fp16", "--workers", "2"}).trainer.precision,
            precision::Precision::Fp16);
  expectTrainRefused({"--precision", "fp8"}, "--precision must be fp32, bf16 or fp16, got 'fp8'");
  expectTrainRefused({"--precision", "fp16", "--workers", "2", "--comm", "ps", "--ps", "1"},
                     "--precision fp16 needs the summed gradient on the workers");
  expectTrainRefused({"--precision", "fp16", "--workers", "2", "--comm", "ps", "--ps", "1", "--staleness", "2"},
                     "--precision fp16 needs the summed gradient on the workers");
  expectTrainRefused({"--precision", "bf16", "--workers", "2", "--comm", "sfb"},
                     "--precision bf16 and fp16 are not yet with --comm sfb or hybrid");
  expectTrainRefused({"--precision", "bf16", "--workers", "2", "--pipeline-stages", "2"},
                     "--precision bf16 and fp16 are not yet in the pipeline engine");
  EXPECT_EQ(
      parseTrainCommandLine({"--precision", "bf16", "--workers", "2", "--comm", "ps", "--ps", "1"}).trainer.precision,
      precision::Precision::Bf16);
}

// 0 is what --help documents as the default (the rendezvous timeout); only a negative value is refused,
// with a message that says so (it used to say "must be positive" while accepting 0).
TEST_F(TrainFlags, StallTimeoutZeroMeansTheRendezvousTimeout) {
  expectTrainRefused({"--stall-timeout", "-1"},
                     "--stall-timeout must not be negative (0: --rendezvous-timeout), got -1");
  const auto c = parseTrainCommandLine({"--stall-timeout", "0", "--rendezvous-timeout", "7"});
  EXPECT_EQ(c.resilience.stallTimeout, std::chrono::milliseconds(7000));
  EXPECT_EQ(parseTrainCommandLine({"--stall-timeout", "2.5"}).resilience.stallTimeout, std::chrono::milliseconds(2500));
}

TEST_F(TrainFlags, CommModesComeFromTheRegistry) {
  for (const auto& entry : comm::commModes()) {
    std::vector<std::string> args{"--comm", entry.name};
    if (entry.mode == comm::CommMode::ParameterServers) args.insert(args.end(), {"--ps", "1"});
    EXPECT_EQ(parseTrainCommandLine(args).comm.mode, entry.mode) << entry.name;
    EXPECT_EQ(comm::commModeNamed(entry.name), entry.mode);
    EXPECT_STREQ(comm::commModeName(entry.mode), entry.name);
  }
  expectTrainRefused({"--comm", "pigeon"},
                     "unknown --comm 'pigeon'; choose one of: auto, allreduce, flat, hd, a2a, sfb, hybrid, ps");
  expectTrainRefused({"--comm", "sfb", "--elastic"},
                     "--elastic works with --comm auto, allreduce, flat, hd or a2a, not --comm sfb");
}

TEST_F(TrainFlags, ParseErrorsAreUsageErrors) {
  expectTrainRefused({"--bogus-flag", "3"}, "--bogus-flag");
  expectTrainRefused({"--steps", "ten"}, "--steps");
}

// Issue 56: every run ended with an evaluation of the whole test set.
TEST_F(TrainFlags, EvalSamplesChoosesASubsetOrNoEvaluation) {
  const auto whole = parseTrainCommandLine({});
  EXPECT_EQ(whole.trainer.evalSamples, data::kAllSamples);
  EXPECT_TRUE(whole.trainer.evalAtEnd);
  const auto subset = parseTrainCommandLine({"--eval-samples", "500", "--eval-every", "10"});
  EXPECT_EQ(subset.trainer.evalSamples, 500);
  EXPECT_TRUE(subset.trainer.evalAtEnd);
  const auto none = parseTrainCommandLine({"--eval-samples", "0"});
  EXPECT_EQ(none.trainer.evalSamples, 0);
  EXPECT_FALSE(none.trainer.evalAtEnd);
  expectTrainRefused({"--eval-samples", "-1"}, "--eval-samples must not be negative, got -1");
  expectTrainRefused({"--eval-samples", "many"}, "--eval-samples");
  expectTrainRefused({"--eval-samples", "0", "--eval-every", "10"},
                     "--eval-every 10 evaluates, which --eval-samples 0 turns off");
  expectTrainRefused({"--eval-samples", "0", "--eval-every", "10", "--stop-at-accuracy", "0.5"},
                     "--eval-every 10 evaluates, which --eval-samples 0 turns off");
}

TEST_F(TrainFlags, ScaleFlagsReachTheOrchestrationOptions) {
  const auto c = parseTrainCommandLine({"--workers", "4", "--probe-peers", "2", "--rebalance-budget", "0.01"});
  EXPECT_EQ(c.orchestration.probePeers, 2);
  EXPECT_DOUBLE_EQ(c.orchestration.rebalanceBudget, 0.01);
  EXPECT_EQ(parseTrainCommandLine({}).orchestration.probePeers, 0);  // all pairs, a fixed period: as before
  EXPECT_DOUBLE_EQ(parseTrainCommandLine({}).orchestration.rebalanceBudget, 0.0);
  expectTrainRefused({"--probe-peers", "-1"}, "--probe-peers");
  expectTrainRefused({"--rebalance-budget", "2"}, "--rebalance-budget");
}

TEST_F(TrainFlags, WorkerIdentityComesFromTheEnvironment) {
  ::setenv(kRankVar, "1", 1);
  ::setenv(kWorldSizeVar, "2", 1);
  ::setenv(kMasterPortVar, "29500", 1);
  const auto c = parseTrainCommandLine({"--threads", "2"});
  ASSERT_TRUE(c.worker.has_value());
  EXPECT_EQ(c.worker->rank, 1);
  EXPECT_EQ(c.split.worldSize(), 2);
  EXPECT_EQ(c.threads, 2);
}

// Pipeline parallelism: --pipeline-stages S makes world / S pipelines (columns); --split is per pipeline.
TEST_F(TrainFlags, PipelineDefaultsAreDataParallelism) {
  const auto c = parseTrainCommandLine({"--nodes", "4"});
  EXPECT_EQ(c.pipeline.stages, 1);
  EXPECT_FALSE(c.pipeline.enabled());
  EXPECT_EQ(c.pipeline.microBatches, 4);
  EXPECT_EQ(c.pipeline.schedule, "1f1b");
  EXPECT_EQ(c.pipeline.partition, "uniform");
  EXPECT_TRUE(c.memoryLimitMb.empty());
  EXPECT_EQ(c.split.worldSize(), 4);
}

TEST_F(TrainFlags, PipelineFlagsParseIntoTheJobConfig) {
  const auto c = parseTrainCommandLine({"--nodes", "8", "--pipeline-stages", "4", "--global-batch", "64"});
  EXPECT_TRUE(c.pipeline.enabled());
  EXPECT_EQ(c.pipeline.stages, 4);
  EXPECT_EQ(c.pipeline.microBatches, 16);                      // 4 x stages
  EXPECT_EQ(c.split.batches, (std::vector<int64_t>{32, 32}));  // equal over the 2 pipelines

  const auto given =
      parseTrainCommandLine({"--nodes", "6", "--pipeline-stages", "3", "--micro-batches", "5", "--schedule", "gpipe",
                             "--partition", "0-1,2-3,4-7", "--global-batch", "30", "--split", "20,10",
                             "--memory-limit-mb", "512.5", "--slowdown", "1,1,1,2,2,2"});
  EXPECT_EQ(given.pipeline.microBatches, 5);
  EXPECT_EQ(given.pipeline.schedule, "gpipe");
  EXPECT_EQ(given.pipeline.partition, "0-1,2-3,4-7");
  EXPECT_EQ(given.split.batches, (std::vector<int64_t>{20, 10}));
  EXPECT_EQ(given.orchestration.policy, "static");
  EXPECT_EQ(given.memoryLimitMb, std::vector<double>(6, 512.5));  // one value: every worker's cap
  EXPECT_DOUBLE_EQ(given.emulation.slowdown.at(0, 5), 2);         // emulation stays one value per worker

  // A pipeline of all the workers: one column takes the whole batch; every policy is allowed.
  const auto one = parseTrainCommandLine({"--nodes", "2", "--pipeline-stages", "2", "--policy", "proportional",
                                          "--export", "m.pt", "--save-params", "p.pt", "--partition", "0,1-5"});
  EXPECT_EQ(one.split.batches, std::vector<int64_t>{one.trainer.globalBatch});
  EXPECT_EQ(one.orchestration.policy, "proportional");
}

TEST_F(TrainFlags, WorldMustBeAMultipleOfTheStages) {
  expectTrainRefused({"--nodes", "6", "--pipeline-stages", "4"}, "--nodes 6 is not a multiple of --pipeline-stages 4");
  expectTrainRefused({"--nnodes", "2", "--nproc-per-node", "3", "--master-port", "29500", "--pipeline-stages", "4"},
                     "--nnodes 2 x --nproc-per-node 3 = 6 workers is not a multiple of --pipeline-stages 4");
  expectTrainRefused({"--pipeline-stages", "0"}, "--pipeline-stages must be at least 1 (1: data parallelism), got 0");
  expectTrainRefused({"--pipeline-stages", "-2"}, "--pipeline-stages must be at least 1");
}

TEST_F(TrainFlags, MicroBatchesScheduleAndPartitionValuesAreChecked) {
  const std::vector<std::string> pipe{"--nodes", "4", "--pipeline-stages", "2"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), pipe.begin(), pipe.end());
    return more;
  };
  expectTrainRefused(with({"--micro-batches", "0"}), "--micro-batches must be at least 1, got 0");
  expectTrainRefused(with({"--micro-batches", "-3"}), "--micro-batches must be at least 1, got -3");
  // Each micro-batch of a step has its own message tags (ScheduleRunner::tagFor): 2^24 at most, up front.
  expectTrainRefused(with({"--micro-batches", "16777217"}), "--micro-batches must be at most 16777216, got 16777217");
  EXPECT_EQ(parseTrainCommandLine(with({"--micro-batches", "2000"})).pipeline.microBatches, 2000);
  expectTrainRefused(with({"--schedule", "pipedream"}), "--schedule must be gpipe or 1f1b; got 'pipedream'");
  expectTrainRefused(with({"--partition", "0-4"}), "--partition '0-4' has 1 ranges but --pipeline-stages is 2");
  expectTrainRefused(with({"--partition", "0-4,5-9,10-12"}), "--partition '0-4,5-9,10-12' has 3 ranges");
  EXPECT_EQ(parseTrainCommandLine(with({"--partition", "0-4, 5-9"})).pipeline.partition, "0-4, 5-9");
  for (const std::string bad : {"even", "0-4;5-9", "0-4,", "0..4,5-9", "a-4,5-9", "0-4,5-"})
    expectTrainRefused(with({"--partition", bad}),
                       "--partition '" + bad + "' is none of uniform, flops, auto or inclusive block ranges");
  expectTrainRefused(with({"--memory-limit-mb", "-1"}), "--memory-limit-mb must be a finite number, at least 0");
  expectTrainRefused(with({"--memory-limit-mb", "inf"}), "--memory-limit-mb");
  expectTrainRefused(with({"--memory-limit-mb", "nan"}), "--memory-limit-mb");
}

// --partition auto plans the cut (and moves it: --keep-partition only for auto); flops cuts by equal FLOPs;
// neither means anything with one stage.
TEST_F(TrainFlags, PlannedPartitionsAndTheirCompanions) {
  const std::vector<std::string> pipe{"--nodes", "4", "--pipeline-stages", "2"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), pipe.begin(), pipe.end());
    return more;
  };
  const auto planned = parseTrainCommandLine(with({"--partition", "auto", "--explain-partition", "--keep-partition"}));
  EXPECT_TRUE(planned.pipeline.planned());
  EXPECT_TRUE(planned.pipeline.explainPartition);
  EXPECT_TRUE(planned.pipeline.keepPartition);
  EXPECT_FALSE(parseTrainCommandLine(with({"--partition", "flops"})).pipeline.planned());
  expectTrainRefused(with({"--keep-partition"}), "--keep-partition is for --partition auto");
  expectTrainRefused(with({"--partition", "flops", "--keep-partition"}), "--keep-partition is for --partition auto");
  expectTrainRefused({"--nodes", "4", "--partition", "auto"},
                     "--partition auto needs --pipeline-stages S > 1 (or auto)");
  expectTrainRefused({"--nodes", "4", "--partition", "flops"}, "--partition flops needs --pipeline-stages S > 1");
  expectTrainRefused({"--nodes", "4", "--explain-partition"}, "--explain-partition needs --pipeline-stages S > 1");
}

// --pipeline-stages auto: the launcher chooses S on this host, so what needs S, or several hosts, is refused.
TEST_F(TrainFlags, AutoStagesLeaveTheShapeToTheLauncher) {
  const auto c = parseTrainCommandLine({"--nodes", "4", "--pipeline-stages", "auto", "--partition", "auto"});
  EXPECT_EQ(c.pipeline.stages, kAutoStages);
  EXPECT_EQ(c.pipeline.microBatches, 0);  // each shape's default, 4 x its stages
  EXPECT_EQ(parseTrainCommandLine({"--nodes", "4", "--pipeline-stages", "auto", "--micro-batches", "6"})
                .pipeline.microBatches,
            6);
  expectTrainRefused({"--nodes", "4", "--pipeline-stages", "auto", "--split", "1,1,1,125"},
                     "--split needs a known number of pipelines");
  expectTrainRefused({"--nodes", "4", "--pipeline-stages", "auto", "--partition", "0-3,4-7"},
                     "--partition '0-3,4-7' needs a number of stages");
  expectTrainRefused(
      {"--nnodes", "2", "--master-port", "29500", "--pipeline-stages", "auto"},
      "a job over several hosts (or one started by another launcher) cannot do: give --pipeline-stages S");
  expectTrainRefused({"--nodes", "4", "--pipeline-stages", "auto", "--elastic"},
                     "--elastic is not supported with --pipeline-stages auto yet");
  expectTrainRefused({"--pipeline-stages", "two"}, "--pipeline-stages must be a number of stages or auto, got 'two'");
}

// --memory-limit-mb: one cap for every worker, or one per worker (a memory-capped node).
TEST_F(TrainFlags, MemoryLimitsArePerWorker) {
  EXPECT_EQ(parseTrainCommandLine({"--nodes", "4", "--memory-limit-mb", "0,0,0,200"}).memoryLimitMb,
            (std::vector<double>{0, 0, 0, 200}));
  const auto c = parseTrainCommandLine({"--nodes", "4", "--memory-limit-mb", "0,0,0,200"});
  EXPECT_DOUBLE_EQ(c.memoryLimitMbOf(3), 200);
  EXPECT_DOUBLE_EQ(c.memoryLimitMbOf(0), 0);
  EXPECT_TRUE(parseTrainCommandLine({"--nodes", "4", "--memory-limit-mb", "0,0,0,0"}).memoryLimitMb.empty());
  expectTrainRefused({"--nodes", "4", "--memory-limit-mb", "100,200"},
                     "--memory-limit-mb has 2 values but the job has 4 workers");
  expectTrainRefused({"--nodes", "4", "--memory-limit-mb", "100,-1,0,0"}, "got '-1'");
}

TEST_F(TrainFlags, SplitHasOneValuePerPipeline) {
  const std::vector<std::string> pipe{"--nodes", "8", "--pipeline-stages", "4", "--global-batch", "64"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), pipe.begin(), pipe.end());
    return more;
  };
  expectTrainRefused(with({"--split", "8,8,8,8,8,8,8,8"}),
                     "--split has 8 entries but the job has 2 pipelines (8 workers / --pipeline-stages 4): one per "
                     "pipeline");
  expectTrainRefused(with({"--split", "40,20"}), "--split sums to 60 but --global-batch is 64");
  expectTrainRefused({"--nodes", "8", "--pipeline-stages", "2", "--global-batch", "3"},
                     "--global-batch 3 is smaller than the 4 pipelines (8 workers / --pipeline-stages 2)");
  // Each pipeline, not each worker, needs a sample: 8 workers in 2 pipelines train on a batch of 2.
  EXPECT_EQ(parseTrainCommandLine({"--nodes", "8", "--pipeline-stages", "4", "--global-batch", "2"}).split.batches,
            (std::vector<int64_t>{1, 1}));
  // The emulation flags stay one value per launched worker.
  expectTrainRefused(with({"--slowdown", "1,4"}), "--slowdown has 2 values but the job has 8 workers");
}

// Pipeline stages checkpoint and resume; their --max-restarts restarts the whole job, so it needs checkpoints.
TEST_F(TrainFlags, PipelinesCheckpointAndRestartTheWholeJobFromACheckpoint) {
  const std::vector<std::string> pipe{"--nodes", "4", "--pipeline-stages", "2"};
  auto with = [&](std::vector<std::string> more) {
    auto args = pipe;
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  EXPECT_EQ(parseTrainCommandLine(with({"--checkpoint-dir", "ck", "--resume"})).checkpoint.dir, "ck");
  EXPECT_EQ(parseTrainCommandLine(with({"--checkpoint-dir", "ck", "--max-restarts", "2"})).resilience.maxRestarts, 2);
  expectTrainRefused(with({"--max-restarts", "1"}),
                     "--max-restarts with --pipeline-stages restarts the whole job from its newest checkpoint: give "
                     "--checkpoint-dir");
  expectTrainRefused(
      {"--nodes", "2", "--max-restarts", "1"},
      "--max-restarts needs --elastic (a fixed job cannot take a worker back), or --pipeline-stages with "
      "--checkpoint-dir (the whole job restarts)");
}

TEST_F(TrainFlags, PipelinesRefuseWhatTheyDoNotSupportYet) {
  const std::vector<std::string> pipe{"--nodes", "4", "--pipeline-stages", "2"};
  const std::vector<std::vector<std::string>> refused{
      {"--comm", "allreduce"},
      {"--comm", "sfb"},
      {"--comm", "hybrid"},
      {"--comm", "ps", "--ps", "1"},
      {"--staleness", "0"},
      {"--sync-bn"},
      {"--elastic"},
      {"--elastic", "--join"},
      {"--elastic", "--max-restarts", "1"},
      {"--node-speed", "100,100,100,25"},
  };
  for (const auto& flags : refused) {
    auto args = pipe;
    args.insert(args.end(), flags.begin(), flags.end());
    const auto message = usageErrorOf([&] { parseTrainCommandLine(args); });
    EXPECT_NE(message.find("is not supported with --pipeline-stages 2 yet"), std::string::npos)
        << flags.front() << " got: " << message;
    EXPECT_NE(message.find(flags.front()), std::string::npos) << message;
  }
  expectTrainRefused({"--nodes", "4", "--pipeline-stages", "2", "--comm", "hybrid"},
                     "--comm hybrid is not supported with --pipeline-stages 2 yet");
  // Issue 56: allreduce was accepted and ran the flat ring; it is refused, naming what stages take.
  expectTrainRefused({"--nodes", "4", "--pipeline-stages", "2", "--comm", "allreduce"},
                     "--comm allreduce (its buckets overlap backward; stages take --comm auto, flat, hd or a2a) is not "
                     "supported with --pipeline-stages 2 yet");
  // The same flags with --pipeline-stages 1 are data parallelism, as before.
  EXPECT_EQ(parseTrainCommandLine({"--nodes", "4", "--pipeline-stages", "1", "--comm", "flat"}).comm.mode,
            comm::CommMode::Flat);
}

// The stage replicas' exchange follows --comm (worker/SyncFactory's makeStageSync).
TEST_F(TrainFlags, PipelinesTakeTheAllReduceAlgorithmsOfComm) {
  for (const auto& [name, mode] :
       std::vector<std::pair<std::string, comm::CommMode>>{{"auto", comm::CommMode::Auto},
                                                           {"flat", comm::CommMode::Flat},
                                                           {"hd", comm::CommMode::HalvingDoubling},
                                                           {"a2a", comm::CommMode::AllToAll}})
    EXPECT_EQ(parseTrainCommandLine({"--nodes", "4", "--pipeline-stages", "2", "--comm", name}).comm.mode, mode)
        << name;
}

TEST_F(TrainFlags, WorkersOfAPipelineJobSeeTheWorldFromTheEnvironment) {
  ::setenv(kRankVar, "3", 1);
  ::setenv(kWorldSizeVar, "4", 1);
  ::setenv(kMasterPortVar, "29500", 1);
  const auto c = parseTrainCommandLine({"--pipeline-stages", "2", "--threads", "1"});
  EXPECT_EQ(c.split.worldSize(), 2);
  expectTrainRefused({"--pipeline-stages", "3"}, "WORLD_SIZE 4 is not a multiple of --pipeline-stages 3");
}

}  // namespace
}  // namespace balancenet::cli
