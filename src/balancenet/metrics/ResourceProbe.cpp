// ResourceProbe: parses /proc/self/statm, /proc/self/status and /proc/meminfo on every call (no caching: the
// figures are live).
#include "balancenet/metrics/ResourceProbe.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace balancenet::metrics {
namespace {

// A "Key:   12345 kB" line of a /proc file (meminfo, self/status), in bytes; 0 if the key is missing.
double procKeyBytes(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  const std::string prefix = key + ":";
  while (std::getline(in, line)) {
    if (line.compare(0, prefix.size(), prefix) != 0) continue;
    std::istringstream fields(line.substr(prefix.size()));
    double kib = 0;
    std::string unit;
    if (!(fields >> kib)) return 0;
    fields >> unit;  // always "kB" on Linux; a bare number would be bytes
    return unit == "kB" ? kib * 1024.0 : kib;
  }
  return 0;
}

}  // namespace

double residentBytes() {
  // statm: size resident shared text lib data dt, all in pages.
  std::ifstream in("/proc/self/statm");
  double sizePages = 0, residentPages = 0;
  if (!(in >> sizePages >> residentPages)) return 0;
  const long page = sysconf(_SC_PAGESIZE);
  return residentPages * static_cast<double>(page > 0 ? page : 4096);
}

double peakResidentBytes() { return procKeyBytes("/proc/self/status", "VmHWM"); }

double nodeMemoryTotalBytes() { return procKeyBytes("/proc/meminfo", "MemTotal"); }

double nodeMemoryAvailableBytes() { return procKeyBytes("/proc/meminfo", "MemAvailable"); }

}  // namespace balancenet::metrics
