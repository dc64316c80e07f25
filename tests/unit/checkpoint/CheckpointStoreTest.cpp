// The checkpoint directory: the newest K kept, a manifest, only complete files under final names, and the
// newest intact checkpoint found past damaged ones, each reported.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "CheckpointTestSupport.h"
#include "balancenet/checkpoint/CheckpointStore.h"
#include "testing/TempDir.h"

namespace balancenet::checkpoint {
namespace {

using testing::sampleCheckpoint;
namespace fs = std::filesystem;

std::vector<std::string> namesIn(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(CheckpointStore, KeepsTheNewestKWithAManifestAndNoTemporaries) {
  balancenet::testing::TempDir dir;
  CheckpointStore store(dir.file("ckpt"), 2);
  EXPECT_FALSE(fs::exists(dir.file("ckpt")));  // nothing is created before the first write
  for (int64_t step : {10, 20, 30}) store.write(sampleCheckpoint(step));
  EXPECT_EQ(namesIn(dir.file("ckpt")),
            (std::vector<std::string>{"manifest.json", "step-00000020.ckpt", "step-00000030.ckpt"}));
  const auto manifest = nlohmann::json::parse(balancenet::testing::readFile(dir.file("ckpt/manifest.json")));
  ASSERT_EQ(manifest["checkpoints"].size(), 2u);
  EXPECT_EQ(manifest["checkpoints"][0]["file"], "step-00000030.ckpt");  // newest first
  EXPECT_EQ(manifest["checkpoints"][0]["step"], 30);
  EXPECT_EQ(manifest["checkpoints"][1]["step"], 20);
  EXPECT_EQ(manifest["checkpoints"][0]["bytes"].get<uint64_t>(), fs::file_size(dir.file("ckpt/step-00000030.ckpt")));
  // Every file under a final name is complete.
  for (const auto& path : store.files()) EXPECT_NO_THROW(decode(balancenet::testing::readFile(path))) << path;
  EXPECT_THROW(CheckpointStore(dir.file("x"), 0), UsageError);
}

TEST(CheckpointStore, NewestGoodSkipsDamagedCheckpointsAndSaysSo) {
  balancenet::testing::TempDir dir;
  CheckpointStore store(dir.path(), 5);
  for (int64_t step : {10, 20, 30}) store.write(sampleCheckpoint(step));
  // 30 truncated (a crash of a writer that did not write atomically), 20 with a flipped byte.
  fs::resize_file(dir.file("step-00000030.ckpt"), fs::file_size(dir.file("step-00000030.ckpt")) / 2);
  {
    std::fstream f(dir.file("step-00000020.ckpt"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-5, std::ios::end);
    f.put('#');
  }
  std::vector<std::string> warnings;
  const auto found = store.newestGood([&](const std::string& w) { warnings.push_back(w); });
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->checkpoint.step, 10);
  EXPECT_EQ(fs::path(found->path).filename(), "step-00000010.ckpt");
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("step-00000030.ckpt is damaged"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("step-00000020.ckpt is damaged (payload checksum mismatch)"), std::string::npos)
      << warnings[1];
}

void truncateHalf(const std::string& path) { fs::resize_file(path, fs::file_size(path) / 2); }

// Resumed at 20 behind K = 2 damaged newer files (30, 40): keeping the K highest steps would remove each new
// checkpoint in the call that wrote it. The damaged newer ones go instead, and the new one is kept.
TEST(CheckpointStore, ACheckpointWrittenBehindDamagedNewerOnesIsKeptAndTheyAreRemoved) {
  balancenet::testing::TempDir dir;
  for (int64_t step : {10, 20, 30, 40}) CheckpointStore(dir.path(), 5).write(sampleCheckpoint(step));
  truncateHalf(dir.file("step-00000030.ckpt"));
  truncateHalf(dir.file("step-00000040.ckpt"));
  CheckpointStore store(dir.path(), 2);
  ASSERT_EQ(store.newestGood(nullptr)->checkpoint.step, 20);  // the resume
  const std::string written = store.write(sampleCheckpoint(25));
  EXPECT_TRUE(fs::exists(written));
  EXPECT_EQ(namesIn(dir.path()),
            (std::vector<std::string>{"manifest.json", "step-00000020.ckpt", "step-00000025.ckpt"}));
  EXPECT_EQ(store.newestGood(nullptr)->checkpoint.step, 25);
  const auto manifest = nlohmann::json::parse(balancenet::testing::readFile(dir.file("manifest.json")));
  ASSERT_EQ(manifest["checkpoints"].size(), 2u);
  EXPECT_EQ(manifest["checkpoints"][0]["step"], 25);
  EXPECT_EQ(manifest["checkpoints"][1]["step"], 20);
}

// An intact file newer than the run's (none should be: a resume takes the newest intact one) is neither
// removed nor counted among the K kept.
TEST(CheckpointStore, AnIntactNewerFileIsLeftAloneAndNotCounted) {
  balancenet::testing::TempDir dir;
  CheckpointStore(dir.path(), 5).write(sampleCheckpoint(90));
  CheckpointStore store(dir.path(), 1);
  for (int64_t step : {10, 20}) store.write(sampleCheckpoint(step));
  EXPECT_EQ(namesIn(dir.path()),
            (std::vector<std::string>{"manifest.json", "step-00000020.ckpt", "step-00000090.ckpt"}));
  const auto manifest = nlohmann::json::parse(balancenet::testing::readFile(dir.file("manifest.json")));
  ASSERT_EQ(manifest["checkpoints"].size(), 1u);
  EXPECT_EQ(manifest["checkpoints"][0]["step"], 20);
}

TEST(CheckpointStore, TemporaryAndForeignFilesAreNeverCheckpoints) {
  balancenet::testing::TempDir dir;
  CheckpointStore store(dir.path(), 3);
  EXPECT_FALSE(store.newestGood(nullptr).has_value());  // empty
  // What a writer killed mid-write leaves behind: a temporary name, never a final one.
  std::ofstream(dir.file("step-00000090.ckpt.tmp.4242")) << "half";
  std::ofstream(dir.file("notes.txt")) << "mine";
  EXPECT_TRUE(store.files().empty());
  store.write(sampleCheckpoint(40));
  EXPECT_EQ(store.files().size(), 1u);
  EXPECT_EQ(store.newestGood(nullptr)->checkpoint.step, 40);
  EXPECT_TRUE(fs::exists(dir.file("notes.txt")));  // other files are left alone
}

TEST(CheckpointStore, RewritingAStepReplacesItWhole) {
  balancenet::testing::TempDir dir;
  CheckpointStore store(dir.path(), 3);
  store.write(sampleCheckpoint(10));
  auto second = sampleCheckpoint(10);
  second.allocator = "replaced";
  store.write(second);
  EXPECT_EQ(store.files().size(), 1u);
  EXPECT_EQ(store.newestGood(nullptr)->checkpoint.allocator, "replaced");
  EXPECT_EQ(namesIn(dir.path()), (std::vector<std::string>{"manifest.json", "step-00000010.ckpt"}));
}

}  // namespace
}  // namespace balancenet::checkpoint
