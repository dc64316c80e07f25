// keepFreedMemory: the user's malloc settings win; otherwise freed tensor memory is reused, not re-faulted.
// The fault counts come from memory_reuse_probe, started with a known environment.
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "balancenet/core/MemoryReuse.h"
#include "testing/ProcessRunner.h"

namespace balancenet {
namespace {

struct Probe {
  int kept = -1;
  long first = -1, steady = -1, pages = -1;  // faults of the 10 first steps, of 5 later ones; pages per step
};

// Runs the probe with none of glibc's malloc variables set, plus `extra` (NAME=value) if given.
Probe runProbe(const std::string& extra = "") {
  std::vector<std::string> argv = {"/usr/bin/env", "-u", "GLIBC_TUNABLES"};
  for (const auto& name : mallocEnvironmentVariables()) argv.insert(argv.end(), {"-u", name});
  if (!extra.empty()) argv.push_back(extra);
  argv.push_back(MEMORY_REUSE_PROBE);
  const auto result = testing::runProcess(argv);
  EXPECT_EQ(result.exitCode, 0) << result.output;
  Probe p;
  std::sscanf(result.output.c_str(), "kept=%d first=%ld steady=%ld pages=%ld", &p.kept, &p.first, &p.steady, &p.pages);
  return p;
}

TEST(MemoryReuse, UserSettingsAreLeftAlone) {
  for (const auto& name : mallocEnvironmentVariables()) {
    const char* old = std::getenv(name.c_str());
    const std::string saved = old ? old : "";
    setenv(name.c_str(), "65536", 1);
    EXPECT_FALSE(keepFreedMemory()) << name;
    if (old)
      setenv(name.c_str(), saved.c_str(), 1);
    else
      unsetenv(name.c_str());
  }
  // A tunable the user set at start-up still decides: memory goes back to the kernel at every step.
  // (This is also what glibc's defaults do in a real training step, 7,000 faults per step for cnn; in
  // this miniature its dynamic thresholds happen to adapt after about 12 steps.)
  const auto tuned = runProbe("GLIBC_TUNABLES=glibc.malloc.trim_threshold=4096");
  EXPECT_EQ(tuned.kept, 0);
  EXPECT_GT(tuned.steady, tuned.pages) << "5 steps faulted less than one step's pages";
}

TEST(MemoryReuse, FreedMemoryIsReusedNotFaultedInAgain) {
  const auto kept = runProbe();
  ASSERT_EQ(kept.kept, 1);
  ASSERT_GT(kept.pages, 8000);
  // The first steps fault the memory in (the counter works here) ...
  EXPECT_GT(kept.first, kept.pages / 2) << "minor page faults are not counted here";
  // ... and then 5 steps, touching about 42,000 pages, fault next to none of them.
  EXPECT_LT(kept.steady, 5 * kept.pages / 50) << "first steps: " << kept.first;
}

}  // namespace
}  // namespace balancenet
