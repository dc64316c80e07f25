// EmulationOptions: the heterogeneity a job emulates, applied by wrappers around the gradient sync; no policy
// reads it. Part of job/JobConfig.h.
#pragma once
#include <vector>

#include "balancenet/core/FieldList.h"
#include "balancenet/emulation/FactorSchedule.h"

namespace balancenet::emulation {

struct EmulationOptions {
  FactorSchedule slowdown;               // --slowdown (+ --slowdown-schedule): relative factors
  FactorSchedule nodeSpeed;              // --node-speed (+ --speed-schedule): paces in samples/s
  std::vector<double> netDelayMs;        // --net-delay-ms: per node latency of every message
  std::vector<double> netBandwidthMbps;  // --net-bandwidth-mbps: per node link speed (megabit/s)

  // The fields a launcher sends its workers (core/FieldList.h): every one.
  BALANCENET_FIELDS(slowdown, nodeSpeed, netDelayMs, netBandwidthMbps);
};
BALANCENET_CHECK_FIELDS(EmulationOptions);

}  // namespace balancenet::emulation
