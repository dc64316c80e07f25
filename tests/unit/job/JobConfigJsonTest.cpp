// The job a launcher hands its processes: every setting comes back as it went, who a process is and the job's
// secret stay behind, and a document this build did not write is one line.
#include "balancenet/job/JobConfigJson.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "balancenet/job/JobDefaults.h"
#include "testing/UsageErrors.h"

namespace balancenet::job {
namespace {

using balancenet::testing::expectOneLineUsageError;

// A value other than the default in every group, and in the settings whose types need a converter of their own.
JobConfig everyGroupSet() {
  JobConfig c = defaultJobConfig();
  c.launch.nnodes = 2;
  c.launch.hostWorkers = {3, 1};
  c.launch.assumedWorldFlags = {"--split"};
  c.launch.rendezvousTimeout = std::chrono::milliseconds(12345);
  c.launch.sources = {{"rank", "3", "SLURM_PROCID"}};
  c.program.argv = {"/usr/bin/python3", "train.py", "--lr", "0.1"};
  c.model.name = "resnet18";
  c.model.inputShape = {3, 32, 32};
  c.model.width = 0.5;
  c.data.source = "imagefolder:/data/x y";
  c.data.normalizeMean = {0.5, 0.25, 0.125};
  c.objective.loss = objective::LossKind::Mse;
  c.syncBatchNorm = true;
  c.split.batches = {10, 20, 30, 68};
  c.orchestration.policy = "bno";
  c.orchestration.batchSizing.mode = adaptive::BatchSizing::Mode::Schedule;
  c.orchestration.batchSizing.schedule = {{0, 128}, {100, 512}};
  c.emulation.slowdown =
      emulation::FactorSchedule::parse("--slowdown", "1,1,2,4", "--slowdown-schedule", "50=1,1,1,8", 4);
  c.emulation.netDelayMs = {0, 0, 5, 50};
  c.comm.mode = comm::CommMode::Hybrid;
  c.comm.overlap = false;
  c.resilience.elastic = true;
  c.resilience.peerTimeout = std::chrono::milliseconds(4500);
  c.trainer.lr.decay = trainer::LrSchedule::Decay::Cosine;
  c.trainer.optimizer.name = "adam";
  c.trainer.runDir = "runs/the launcher's";
  c.trainer.progressSeconds = 0;
  c.threads = 3;
  c.threadsGiven = true;
  c.checkpoint.dir = "/tmp/ckpt";
  c.pipeline.stages = 2;
  c.pipeline.partition = "0-9,10-17";
  c.memoryLimitMb = {512, 0, 0, 1024};
  c.argv = {"balancenet", "train", "--workers", "4"};
  federated::FederatedOptions f;
  f.localSteps = {10, 40};
  f.strategy = "fedbuff";
  f.alpha = federated::kIid;  // infinity, which JSON has no number for
  c.federated = f;
  return c;
}

TEST(JobConfigJson, EverySettingComesBackAsItWent) {
  const JobConfig c = everyGroupSet();
  const std::string text = jobConfigJson(c);
  EXPECT_NE(text, jobConfigJson(defaultJobConfig()));
  const JobConfig back = jobConfigFromJson(text);
  EXPECT_EQ(jobConfigJson(back), text);
  EXPECT_EQ(back.launch.hostWorkers, (std::vector<int>{3, 1}));
  EXPECT_EQ(back.launch.rendezvousTimeout, std::chrono::milliseconds(12345));
  EXPECT_EQ(back.launch.sources.at(0).from, "SLURM_PROCID");
  EXPECT_EQ(back.data.source, "imagefolder:/data/x y");
  EXPECT_EQ(back.objective.loss, objective::LossKind::Mse);
  EXPECT_EQ(back.split.batches, (std::vector<int64_t>{10, 20, 30, 68}));
  EXPECT_EQ(back.orchestration.batchSizing.mode, adaptive::BatchSizing::Mode::Schedule);
  EXPECT_EQ(back.orchestration.batchSizing.schedule.at(1), (std::pair<int64_t, int64_t>{100, 512}));
  EXPECT_EQ(back.emulation.slowdown.at(10, 3), 4);  // the base...
  EXPECT_EQ(back.emulation.slowdown.at(60, 3), 8);  // ...and the change at step 50
  EXPECT_EQ(back.comm.mode, comm::CommMode::Hybrid);
  EXPECT_FALSE(back.comm.overlap);
  EXPECT_EQ(back.resilience.peerTimeout, std::chrono::milliseconds(4500));
  EXPECT_EQ(back.trainer.lr.decay, trainer::LrSchedule::Decay::Cosine);
  EXPECT_EQ(back.trainer.runDir, "runs/the launcher's");
  EXPECT_TRUE(back.threadsGiven);
  EXPECT_EQ(back.memoryLimitMb, (std::vector<double>{512, 0, 0, 1024}));
  ASSERT_TRUE(back.federated.has_value());
  EXPECT_EQ(back.federated->localSteps.high, 40);
  EXPECT_EQ(back.federated->strategy, "fedbuff");
  EXPECT_EQ(back.federated->alpha, federated::kIid);
  EXPECT_FALSE(jobConfigFromJson(jobConfigJson(defaultJobConfig())).federated.has_value());
}

TEST(JobConfigJson, WhoAProcessIsAndTheJobsSecretStayBehind) {
  JobConfig c = everyGroupSet();
  c.worker = WorkerIdentity{};
  c.worker->rank = 3;
  c.server = 1;
  c.launch.jobToken = "a-secret-of-the-job";
  const std::string text = jobConfigJson(c);
  EXPECT_EQ(text.find("a-secret-of-the-job"), std::string::npos);
  const JobConfig back = jobConfigFromJson(text);
  EXPECT_FALSE(back.worker.has_value());  // each process reads its own from its environment
  EXPECT_FALSE(back.server.has_value());
  EXPECT_TRUE(back.launch.jobToken.empty());
}

TEST(JobConfigJson, ADocumentThisBuildDidNotWriteIsOneUsageError) {
  auto doc = nlohmann::json::parse(jobConfigJson(everyGroupSet()));
  auto otherFormat = doc;
  otherFormat["format"] = 2;
  auto missing = doc;
  missing["comm"].erase("overlap");
  for (const std::string& text : {otherFormat.dump(), missing.dump(), std::string("{\"format\": 1"), std::string()})
    expectOneLineUsageError([&] { jobConfigFromJson(text); }, "not one this balancenet wrote");
}

}  // namespace
}  // namespace balancenet::job
