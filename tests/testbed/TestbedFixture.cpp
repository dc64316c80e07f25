#include "TestbedFixture.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "testing/FloatBound.h"
#include "testing/ReferenceTraining.h"

namespace balancenet::testing {

void TestbedFixture::SetUp() {
  if (const auto why = Testbed::unavailableReason()) {
    const char* required = std::getenv("BALANCENET_TESTBED_REQUIRED");
    if (required && std::string(required) == "1")
      FAIL() << "BALANCENET_TESTBED_REQUIRED=1 but this machine cannot make a testbed: " << *why;
    GTEST_SKIP() << "no testbed on this machine: " << *why;
  }
  BinaryFixture::SetUp();
  // As a user should give it: in a file only its owner can read, so it shows in no command line.
  std::ofstream(jobTokenFile()) << kTestbedJobToken << "\n";
  std::filesystem::permissions(jobTokenFile(),
                               std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

std::vector<std::string> TestbedFixture::hostCommand(const Testbed& bed, int host,
                                                     const std::vector<std::string>& flags, int jobHosts) const {
  auto all = flags;
  const int workers = workersOnHost_.empty() ? 1 : workersOnHost_.at(host);
  all.insert(all.end(),
             {"--nnodes", std::to_string(jobHosts > 0 ? jobHosts : bed.hosts()), "--node-rank", std::to_string(host),
              "--nproc-per-node", std::to_string(workers), "--master-addr", bed.address(0), "--master-port",
              std::to_string(kTestbedStorePort), "--job-token-file", jobTokenFile()});
  if (namesIface_) all.insert(all.end(), {"--iface", "eth0"});
  auto argv = trainCommand(dataDir_, runDir(host), all);
  if (defaultThreads_) {  // trainCommand's "--threads 1" out
    const auto threads = std::find(argv.begin(), argv.end(), "--threads");
    argv.erase(threads, threads + 2);
  }
  return bed.asHost(host, argv);
}

std::vector<ProcessResult> TestbedFixture::trainOnHosts(const Testbed& bed, const std::vector<std::string>& flags,
                                                        ProcessOptions options,
                                                        const std::function<void(int, pid_t, double)>& whileRunning,
                                                        int jobHosts) {
  if (jobHosts <= 0) jobHosts = bed.hosts();
  std::vector<ProcessResult> results(jobHosts);
  std::vector<std::thread> hosts;
  for (int h = 0; h < jobHosts; ++h)
    hosts.emplace_back([&, h] {
      auto o = options;
      if (whileRunning) o.whileRunning = [&, h](pid_t pid, double s) { whileRunning(h, pid, s); };
      results[h] = runProcess(hostCommand(bed, h, flags, jobHosts), o);
    });
  for (auto& t : hosts) t.join();
  return results;
}

void TestbedFixture::expectOneProcessParameters(const std::vector<std::string>& flags, const std::string& saved,
                                                int steps, const std::string& what) {
  auto single = flags;
  single.insert(single.end(), {"--nodes", "1", "--save-params", dir_.file("single.pt"), "--run-dir", dir_.file("one")});
  const auto one = train(single);
  ASSERT_EQ(one.exitCode, 0) << one.output;
  const auto oneProcess = loadSavedParameters(dir_.file("single.pt"));
  const double diff = maxAbsDifference(loadSavedParameters(saved), oneProcess);
  const double bound = exactnessBound(oneProcess, steps);
  std::printf("%s vs 1 process: max |param difference| = %.3g (float bound %.3g)\n", what.c_str(), diff, bound);
  EXPECT_LT(diff, bound);
}

void TestbedFixture::expectEveryStepTrained(int steps, int globalBatch, int lastStepRanks, int rank0Host) const {
  const auto summary = nlohmann::json::parse(readFile(runDir(rank0Host) + "/summary.json"));
  EXPECT_EQ(summary["steps"], steps);
  EXPECT_EQ(summary["samples_trained"].get<double>(), double(steps) * globalBatch);
  std::map<int, int> rowsOfStep;  // steps.csv: step,rank,...
  std::istringstream csv(readFile(runDir(rank0Host) + "/steps.csv"));
  std::string line;
  std::getline(csv, line);  // header
  while (std::getline(csv, line))
    if (!line.empty()) ++rowsOfStep[std::stoi(line.substr(0, line.find(',')))];
  EXPECT_EQ(static_cast<int>(rowsOfStep.size()), steps);
  EXPECT_EQ(rowsOfStep[steps - 1], lastStepRanks);
}

}  // namespace balancenet::testing
