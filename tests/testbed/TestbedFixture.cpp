#include "TestbedFixture.h"

#include <cstdlib>
#include <thread>

namespace balancenet::testing {

void TestbedFixture::SetUp() {
  if (const auto why = Testbed::unavailableReason()) {
    const char* required = std::getenv("BALANCENET_TESTBED_REQUIRED");
    if (required && std::string(required) == "1")
      FAIL() << "BALANCENET_TESTBED_REQUIRED=1 but this machine cannot make a testbed: " << *why;
    GTEST_SKIP() << "no testbed on this machine: " << *why;
  }
  BinaryFixture::SetUp();
}

std::vector<std::string> TestbedFixture::hostCommand(const Testbed& bed, int host,
                                                     const std::vector<std::string>& flags) const {
  auto all = flags;
  all.insert(all.end(), {"--nnodes", std::to_string(bed.hosts()), "--node-rank", std::to_string(host),
                         "--nproc-per-node", "1", "--master-addr", bed.address(0), "--master-port",
                         std::to_string(kTestbedStorePort), "--iface", "eth0"});
  return bed.asHost(host, trainCommand(dataDir_, runDir(host), all));
}

std::vector<ProcessResult> TestbedFixture::trainOnHosts(const Testbed& bed, const std::vector<std::string>& flags,
                                                        ProcessOptions options,
                                                        const std::function<void(int, pid_t, double)>& whileRunning) {
  options.env.emplace("BALANCENET_JOB_TOKEN", kTestbedJobToken);
  std::vector<ProcessResult> results(bed.hosts());
  std::vector<std::thread> hosts;
  for (int h = 0; h < bed.hosts(); ++h)
    hosts.emplace_back([&, h] {
      auto o = options;
      if (whileRunning) o.whileRunning = [&, h](pid_t pid, double s) { whileRunning(h, pid, s); };
      results[h] = runProcess(hostCommand(bed, h, flags), o);
    });
  for (auto& t : hosts) t.join();
  return results;
}

}  // namespace balancenet::testing
