// ResourceProbe: this process's resident memory and the node's memory, read from /proc (Linux).
#pragma once

namespace balancenet::metrics {

// Each returns bytes, or 0 when the figure cannot be read (not Linux, /proc not mounted): 0 is what
// NodeMetrics means by "unknown". Cheap enough to call every few hundred milliseconds.
double residentBytes();             // resident set size of this process (/proc/self/statm)
double peakResidentBytes();         // the most it has been since the process started (VmHWM of /proc/self/status)
double nodeMemoryTotalBytes();      // MemTotal of /proc/meminfo
double nodeMemoryAvailableBytes();  // MemAvailable of /proc/meminfo (free + reclaimable)

}  // namespace balancenet::metrics
