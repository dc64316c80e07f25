// Bad input: each case is one clear error line, a non-zero exit, and no hang.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "BinaryFixture.h"

namespace balancenet::testing {
namespace {

class BadInput : public BinaryFixture {
 protected:
  ProcessResult quick(std::vector<std::string> flags) {
    flags.insert(flags.begin(), {"--model", "mlp", "--steps", "2", "--global-batch", "8"});
    ProcessOptions o;
    o.timeoutSeconds = 60;
    return train(flags, o);
  }
};

TEST_F(BadInput, UnknownModel) {
  expectOneLineError(quick({"--model", "transformer"}), "unknown --model 'transformer'; choose one of: ", 2);
}

TEST_F(BadInput, SplitOfWrongLength) {
  expectOneLineError(quick({"--nodes", "2", "--split", "2,3,3"}), "--split has 3 entries but the job has 2 nodes", 2);
}

TEST_F(BadInput, SplitNotSummingToGlobalBatch) {
  expectOneLineError(quick({"--nodes", "2", "--split", "2,3"}), "--split sums to 5 but --global-batch is 8", 2);
}

TEST_F(BadInput, SplitWithNonPositiveEntry) {
  expectOneLineError(quick({"--nodes", "2", "--split", "8,0"}), "node 1 gets 0 samples", 2);
}

TEST_F(BadInput, UnknownCommMode) {
  expectOneLineError(quick({"--comm", "carrier-pigeon"}), "unknown --comm 'carrier-pigeon'; choose one of: ", 2);
}

TEST_F(BadInput, NonPositiveBucketSize) { expectOneLineError(quick({"--bucket-mb", "0"}), "--bucket-mb must be positive", 2); }

TEST_F(BadInput, BandwidthListOfWrongLength) {
  expectOneLineError(quick({"--nodes", "2", "--net-bandwidth-mbps", "100"}),
                     "--net-bandwidth-mbps has 1 values but the job has 2 nodes", 2);
}

TEST_F(BadInput, CompareVariantWithoutName) {
  ProcessOptions o;
  o.timeoutSeconds = 60;
  expectOneLineError(run({"compare", "--models", "mlp", "--variant", "--no-overlap", "--out", dir_.file("c")}, o),
                     "is not NAME=FLAGS", 2);
}

TEST_F(BadInput, ConfigFiles) {
  struct Case {
    const char* yaml;
    const char* error;
  };
  const Case cases[] = {
      {"modle: mlp\n", "unknown key 'modle' in --config"},
      {"steps: [1\n", "is not valid YAML: yaml-cpp: error at line 2"},
      {"- steps\n- 3\n", "must hold a map of flag names to values"},
      {"sync-bn: maybe\n", "config key 'sync-bn' is a switch: true or false, not 'maybe'"},
      {"optimizer:\n  name: sgd\n", "config key 'optimizer': nested maps are not flags"},
      {"width: 0\n", "--width must be positive, got 0"},
      {"config: other.yaml\n", "cannot name another config file"},
  };
  for (const auto& c : cases) {
    const auto path = dir_.file("bad.yaml");
    std::ofstream(path) << c.yaml;
    expectOneLineError(quick({"--config", path}), c.error, 2);
  }
  expectOneLineError(quick({"--config", dir_.file("missing.yaml")}), "missing.yaml: cannot be read", 2);
}

TEST_F(BadInput, TorchScriptModels) {
  expectOneLineError(quick({"--model", dir_.file("missing.pt")}), "missing.pt: not a readable TorchScript file", 2);
  std::ofstream(dir_.file("garbage.pt")) << "not a zip archive";
  expectOneLineError(quick({"--model", dir_.file("garbage.pt")}), "garbage.pt: not a readable TorchScript file", 2);
  const std::string fixture = std::string(BALANCENET_SOURCE_DIR) + "/tests/fixtures/tiny_cnn.pt";
  expectOneLineError(quick({"--model", fixture, "--sync-bn"}), "--sync-bn needs a zoo model", 2);
}

TEST_F(BadInput, UnknownFlag) { expectOneLineError(quick({"--bogus-flag", "3"}), "--bogus-flag", 2); }

TEST_F(BadInput, MissingDatasetDirectory) {
  expectOneLineError(quick({"--data-dir", dir_.file("nowhere")}), "nowhere", 2);
}

TEST_F(BadInput, CorruptDatasetFile) {
  // Overwrite the training images with a file whose magic number is wrong.
  std::filesystem::remove(dataDir_ + "/train-images-idx3-ubyte.gz");
  std::ofstream(dataDir_ + "/train-images-idx3-ubyte", std::ios::binary) << std::string("\x00\x00\x08\x01garbage", 11);
  expectOneLineError(quick({}), "train-images-idx3-ubyte", 2);
}

TEST_F(BadInput, TruncatedDatasetFile) {
  const auto path = dataDir_ + "/t10k-labels-idx1-ubyte.gz";
  std::filesystem::remove(path);
  std::ofstream(dataDir_ + "/t10k-labels-idx1-ubyte", std::ios::binary) << std::string("\x00\x00\x08\x01\x00\x00\x00\x80\x01\x02", 10);
  expectOneLineError(quick({}), "t10k-labels-idx1-ubyte", 2);
}

TEST_F(BadInput, PortInUse) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = 0;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const int port = ntohs(addr.sin_port);
  expectOneLineError(quick({"--master-port", std::to_string(port)}), std::to_string(port), 1);
  ::close(fd);
}

TEST_F(BadInput, PeerThatNeverArrives) {
  // Rank 0 of a 2-worker job started by hand; rank 1 never comes.
  ProcessOptions o;
  o.env = {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", std::to_string(freePort())}};
  o.timeoutSeconds = 60;
  auto r = train({"--model", "mlp", "--steps", "2", "--global-batch", "8", "--rendezvous-timeout", "2"}, o);
  expectOneLineError(r, "rank(s) 1 of 2 never arrived", 1);
  EXPECT_LT(r.seconds, 30);
}

TEST_F(BadInput, MalformedEnvironment) {
  ProcessOptions o;
  o.env = {{"RANK", "3"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "29500"}};
  expectOneLineError(train({"--model", "mlp"}, o), "RANK='3'", 2);
}

TEST_F(BadInput, GlobalBatchSmallerThanWorkers) {
  expectOneLineError(quick({"--nodes", "3", "--global-batch", "2"}), "--global-batch 2 is smaller than the 3 workers", 2);
}

TEST_F(BadInput, UnknownPolicy) {
  expectOneLineError(quick({"--policy", "fastest"}), "unknown --policy 'fastest'; choose one of: ", 2);
}

TEST_F(BadInput, UnknownCommListsTheFactorModes) {
  expectOneLineError(quick({"--comm", "gossip"}),
                     "unknown --comm 'gossip'; choose one of: allreduce, flat, sfb, hybrid", 2);
}

TEST_F(BadInput, EmulationListOfWrongLength) {
  expectOneLineError(quick({"--nodes", "2", "--node-speed", "100,100,25"}), "--node-speed has 3 values but the job has 2 nodes", 2);
}

TEST_F(BadInput, HelpExplainsAndSucceeds) {
  auto r = run({"train", "--help"});
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_NE(r.output.find("--split"), std::string::npos);
  EXPECT_NE(r.output.find("--master-addr"), std::string::npos);
}

}  // namespace
}  // namespace balancenet::testing
