// --config: a YAML file of train flags, overridden by the command line, shown by --print-config.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "BinaryFixture.h"

namespace balancenet::testing {
namespace {

class Config : public BinaryFixture {};

TEST_F(Config, CommandLineOverridesTheFileAndPrintConfigShowsTheResult) {
  const auto path = dir_.file("run.yaml");
  std::ofstream(path) << "model: mlp\nsteps: 3\nglobal-batch: 16\nsplit: [10, 6]\nnodes: 2\nsync-bn: true\n"
                         "devices: [cpu, cpu]\n";
  auto r = run({"train", "--config", path, "--steps", "4", "--print-config"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  for (const char* line : {"\nmodel: mlp\n", "\nsteps: 4\n", "\nsplit: 10,6\n", "\nsync-bn: true\n", "\nlr: 0.05\n",
                           "\ndevices: cpu,cpu\n", "\ndevice: auto\n"})
    EXPECT_NE(r.output.find(line), std::string::npos) << line << " in\n" << r.output;
  // What --print-config prints is itself a valid config: the round trip gives the same text.
  std::ofstream(dir_.file("printed.yaml")) << r.output;
  auto again = run({"train", "--config", dir_.file("printed.yaml"), "--print-config"});
  ASSERT_EQ(again.exitCode, 0) << again.output;
  EXPECT_EQ(again.output, r.output);
}

TEST_F(Config, TrainsWithTheFilesSettings) {
  const auto path = dir_.file("run.yaml");
  std::ofstream(path) << "model: mlp\nsteps: 3\nglobal-batch: 16\nsplit: [10, 6]\nnodes: 2\nthreads: 1\n";
  auto r = train({"--config", path});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const auto summary = nlohmann::json::parse(readFile(dir_.file("run/summary.json")));
  EXPECT_EQ(summary["steps"], 3);
  EXPECT_EQ(summary["split"], "10,6");
  EXPECT_EQ(summary["model"], "mlp");
  EXPECT_EQ(summary["devices"], nlohmann::json::array({"cpu", "cpu"}));  // auto on a host without a GPU
}

}  // namespace
}  // namespace balancenet::testing
