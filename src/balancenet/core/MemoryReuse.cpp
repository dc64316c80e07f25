// MemoryReuse: two mallopt calls, unless the environment already tunes malloc.
#include "balancenet/core/MemoryReuse.h"

#include <malloc.h>

#include <cstdlib>
#include <string>

#include "balancenet/core/EnvironmentVariables.h"

namespace balancenet {
namespace {

constexpr int kMmapThresholdBytes = 32 << 20;  // glibc's largest accepted value on 64-bit
constexpr int kTrimThresholdBytes = 1 << 30;

bool userTunesMalloc() {
  for (const auto& name : mallocEnvironmentVariables())
    if (std::getenv(name.c_str())) return true;
  const char* tunables = std::getenv(kGlibcTunablesVar);
  return tunables && std::string(tunables).find("glibc.malloc.") != std::string::npos;
}

}  // namespace

const std::vector<std::string>& mallocEnvironmentVariables() {
  static const std::vector<std::string> names = {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_",
                                                 "MALLOC_MMAP_MAX_"};
  return names;
}

bool keepFreedMemory() {
  if (userTunesMalloc()) return false;
  // Setting either value also turns off glibc's dynamic adjustment of both, which is what undoes them.
  return mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes) == 1 && mallopt(M_TRIM_THRESHOLD, kTrimThresholdBytes) == 1;
}

}  // namespace balancenet
