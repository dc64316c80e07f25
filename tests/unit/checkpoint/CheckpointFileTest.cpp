// The checkpoint format: what goes in comes out, and any damage is detected with its reason.
#include <gtest/gtest.h>

#include "CheckpointTestSupport.h"
#include "balancenet/checkpoint/CheckpointFile.h"

namespace balancenet::checkpoint {
namespace {

using testing::sampleCheckpoint;

void expectCorrupt(const std::string& bytes, const std::string& reason) {
  try {
    decode(bytes);
    ADD_FAILURE() << "decoded a damaged checkpoint; expected: " << reason;
  } catch (const CorruptCheckpoint& e) {
    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
  }
}

TEST(CheckpointFile, RoundTripKeepsEverySection) {
  const Checkpoint c = sampleCheckpoint(120);
  const Checkpoint back = decode(encode(c));
  EXPECT_EQ(back.run.signature.model, "mlp");
  EXPECT_EQ(back.run.signature.tensors, c.run.signature.tensors);
  EXPECT_EQ(back.run.optimizer, "sgd");
  EXPECT_EQ(back.run.worldSize, 2);
  EXPECT_EQ(back.run.globalBatch, 32);
  EXPECT_EQ(back.run.seed, 7u);
  EXPECT_EQ(back.step, 120);
  EXPECT_EQ(back.training, c.training);
  EXPECT_EQ(back.allocator, c.allocator);
  EXPECT_EQ(back.rng, c.rng);
}

// A job with GPU workers keeps each rank's GPU generator too (empty for a CPU rank); a CPU job's file has none.
TEST(CheckpointFile, GpuGeneratorsRoundTripAndACpuJobsFileHasNone) {
  Checkpoint c = sampleCheckpoint(5);
  const std::string cpuJob = encode(c);
  EXPECT_EQ(cpuJob.find("gpu_rng"), std::string::npos);
  EXPECT_TRUE(decode(cpuJob).gpuRng.empty());

  c.gpuRng = {"rank zero's GPU generator", ""};  // rank 1 computes on the CPU
  const Checkpoint back = decode(encode(c));
  EXPECT_EQ(back.gpuRng, c.gpuRng);
  EXPECT_EQ(back.rng, c.rng);
}

// A compressed job keeps each rank's exchange state (error feedback) in sections of its own; an exact job's has none.
TEST(CheckpointFile, EachRanksExchangeStateRoundTripsAndAnExactJobsFileHasNone) {
  Checkpoint c = sampleCheckpoint(5);
  EXPECT_EQ(encode(c).find("\"sync/"), std::string::npos);
  c.syncState = {"rank zero's residuals", "rank one's residuals"};
  const Checkpoint back = decode(encode(c));
  EXPECT_EQ(back.syncState, c.syncState);
  EXPECT_EQ(back.training, c.training);
}

TEST(CheckpointFile, EveryFlippedByteIsDetected) {
  const std::string bytes = encode(sampleCheckpoint(3));
  // Preamble, header and payload alike: magic, lengths or checksums catch each one.
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string damaged = bytes;
    damaged[i] = static_cast<char>(damaged[i] ^ 0x10);
    EXPECT_THROW(decode(damaged), CorruptCheckpoint) << "byte " << i << " of " << bytes.size();
  }
}

TEST(CheckpointFile, TruncatedExtendedAndForeignFilesAreDetected) {
  const std::string bytes = encode(sampleCheckpoint(3));
  expectCorrupt(bytes.substr(0, bytes.size() - 1), "the preamble announces");
  expectCorrupt(bytes.substr(0, 10), "truncated");
  expectCorrupt(bytes + "x", "the preamble announces");
  expectCorrupt("PK\x03\x04 a zip file, not a checkpoint at all, long enough", "wrong magic");
  std::string payloadFlip = bytes;
  payloadFlip.back() = static_cast<char>(payloadFlip.back() ^ 1);
  expectCorrupt(payloadFlip, "payload checksum");
  std::string future = bytes;
  future[8] = 9;  // format version 9
  expectCorrupt(future, "format version 9");
}

TEST(ModelSignature, DescribesAndNamesTheFirstDifference) {
  const ModelSignature mlp{"mlp", {"a 64x784", "b 64"}};
  EXPECT_EQ(mlp.describe(), "mlp (2 tensors, 50240 parameters)");
  EXPECT_EQ(mlp.difference(mlp), "");
  EXPECT_EQ(mlp.difference({"cnn", {"a 64x784", "b 64"}}), "model mlp vs cnn");
  EXPECT_EQ(mlp.difference({"mlp", {"a 64x784", "b 32"}}), "tensor 1: b 64 vs b 32");
  EXPECT_EQ(mlp.difference({"mlp", {"a 64x784"}}), "2 vs 1 parameter tensors");
}

}  // namespace
}  // namespace balancenet::checkpoint
