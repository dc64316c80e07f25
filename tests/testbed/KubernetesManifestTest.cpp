// examples/kubernetes/balancenet-job.yaml without Kubernetes: its pods' command and environment run as testbed
// hosts, each with the JOB_COMPLETION_INDEX and HOSTNAME an Indexed Job gives it and the headless Service's
// names in its /etc/hosts (`ip netns exec` mounts /etc/netns/<namespace>/hosts over it), and the job trains.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "TestbedFixture.h"

namespace balancenet::testing {
namespace {

const std::string kManifest = std::string(BALANCENET_SOURCE_DIR) + "/examples/kubernetes/balancenet-job.yaml";

// What the test takes from the manifest: the Job's pod template and the Service that names its pods.
struct Manifest {
  std::string job;
  std::string service;
  int completions = 0;
  std::vector<std::string> command;
  std::map<std::string, std::string> env;  // a secret's value: the testbed's token
};

Manifest readManifest() {
  Manifest m;
  YAML::Node job;
  for (const auto& doc : YAML::LoadAllFromFile(kManifest)) {
    const auto kind = doc["kind"].as<std::string>();
    if (kind == "Job") job = doc;
    if (kind == "Service") {
      m.service = doc["metadata"]["name"].as<std::string>();
      EXPECT_EQ(doc["spec"]["clusterIP"].as<std::string>(), "None") << "the Service must be headless";
    }
  }
  EXPECT_TRUE(job) << "no Job in " << kManifest;
  if (!job) return m;
  m.job = job["metadata"]["name"].as<std::string>();
  EXPECT_EQ(job["spec"]["completionMode"].as<std::string>(), "Indexed");
  m.completions = job["spec"]["completions"].as<int>();
  // Pod I is <job>-I.<subdomain> only where the subdomain is the headless Service's name.
  const auto pod = job["spec"]["template"]["spec"];
  EXPECT_EQ(pod["subdomain"].as<std::string>(), m.service);
  const auto container = pod["containers"][0];
  m.command = container["command"].as<std::vector<std::string>>();
  for (const auto& e : container["env"])
    m.env[e["name"].as<std::string>()] = e["value"] ? e["value"].as<std::string>() : std::string(kTestbedJobToken);
  return m;
}

// /etc/netns/<namespace>/hosts of every testbed host: the pods' DNS names, as the headless Service gives them.
class PodNames {
 public:
  PodNames(const Testbed& bed, const Manifest& m) : madeRoot_(!std::filesystem::exists(kRoot)) {
    std::string hosts = "127.0.0.1 localhost\n";
    for (int i = 0; i < bed.hosts(); ++i)
      hosts += bed.address(i) + " " + m.job + "-" + std::to_string(i) + "." + m.service + "\n";
    for (int i = 0; i < bed.hosts(); ++i) {
      dirs_.push_back(std::string(kRoot) + "/" + bed.name() + "-h" + std::to_string(i));
      std::filesystem::create_directories(dirs_.back());
      std::ofstream(dirs_.back() + "/hosts") << hosts;
    }
  }
  ~PodNames() {
    for (const auto& d : dirs_) std::filesystem::remove_all(d);
    if (madeRoot_) std::filesystem::remove(kRoot);
  }
  PodNames(const PodNames&) = delete;
  PodNames& operator=(const PodNames&) = delete;

 private:
  static constexpr const char* kRoot = "/etc/netns";
  bool madeRoot_;  // removed afterwards only if this made it
  std::vector<std::string> dirs_;
};

using KubernetesManifest = TestbedFixture;

TEST_F(KubernetesManifest, IndexedJobPodsTrainAsTestbedHosts) {
  const auto m = readManifest();
  ASSERT_FALSE(m.command.empty()) << kManifest;
  ASSERT_EQ(m.command[0], "balancenet");
  ASSERT_EQ(m.completions, 2);
  Testbed bed({"none", "none"});
  const PodNames names(bed, m);
  // The manifest's command, then this test's short job (the last value of a flag wins).
  const std::vector<std::string> shortJob{"--data-dir", dataDir_, "--model",        "mlp", "--width",      "0.25",
                                          "--steps",    "3",      "--global-batch", "32",  "--eval-every", "0"};
  std::vector<ProcessResult> pods(m.completions);
  std::vector<std::thread> threads;
  for (int i = 0; i < m.completions; ++i)
    threads.emplace_back([&, i] {
      std::vector<std::string> argv{BALANCENET_BINARY};
      argv.insert(argv.end(), m.command.begin() + 1, m.command.end());
      argv.insert(argv.end(), shortJob.begin(), shortJob.end());
      argv.insert(argv.end(), {"--run-dir", runDir(i)});
      ProcessOptions o;
      o.env = m.env;
      o.env["JOB_COMPLETION_INDEX"] = std::to_string(i);
      o.env["HOSTNAME"] = m.job + "-" + std::to_string(i);
      pods[i] = runProcess(bed.asHost(i, argv), o);
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < m.completions; ++i) {
    ASSERT_FALSE(pods[i].timedOut) << "pod " << i << " hung:\n" << pods[i].output;
    ASSERT_EQ(pods[i].exitCode, 0) << "pod " << i << ":\n" << pods[i].output;
  }
  // One job of 2 pods x --nproc-per-node workers, not two jobs: pod 0 holds rank 0's summary.
  const auto summary = nlohmann::json::parse(readFile(runDir(0) + "/summary.json"));
  EXPECT_EQ(summary["nodes"], 4);
  EXPECT_EQ(summary["steps"], 3);
}

}  // namespace
}  // namespace balancenet::testing
