// The emulation flags: declared alike for train, launch and federate, parsed into config.emulation.
#include "balancenet/cli/flags/EmulationFlags.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "balancenet/cli/flags/TrainFlags.h"
#include "balancenet/core/Error.h"
#include "balancenet/emulation/FactorSchedule.h"

namespace balancenet::cli {
using job::JobConfig;

void addEmulationFlags(CLI::App& app, EmulationRaw& raw) {
  app.add_option("--slowdown", raw.slowdown,
                 "Emulation: worker i sleeps (s_i - 1) x its real compute time each step (s_i >= 1), e.g. 1,1,1,4");
  app.add_option("--slowdown-schedule", raw.slowdownSchedule, "Changes of --slowdown, e.g. '100=1,1,1,8;200=1,1,1,4'");
  app.add_option("--node-speed", raw.nodeSpeed,
                 "Emulation: worker i's compute lasts at least b_i / v_i seconds (samples/s), e.g. 100,100,100,25");
  app.add_option("--speed-schedule", raw.speedSchedule,
                 "Changes of --node-speed, e.g. '100=100,100,100,25;200=100,100,100,100'");
  app.add_option("--net-delay-ms", raw.netDelayMs,
                 "Emulation: per-worker link latency added to every message, e.g. 0,0,0,5 (messages pay the largest)");
  app.add_option("--net-bandwidth-mbps", raw.netBandwidthMbps,
                 "Emulation: per-worker link speed in megabit/s, e.g. 1000,1000,1000,100 (0: unlimited; messages go at "
                 "the smallest)");
}

// --slowdown, --node-speed (and their schedules), --net-delay-ms, --net-bandwidth-mbps.
void validateEmulation(JobConfig& c, const EmulationRaw& raw, int world) {
  auto& e = c.emulation;
  e.slowdown =
      emulation::FactorSchedule::parse("--slowdown", raw.slowdown, "--slowdown-schedule", raw.slowdownSchedule, world);
  e.nodeSpeed =
      emulation::FactorSchedule::parse("--node-speed", raw.nodeSpeed, "--speed-schedule", raw.speedSchedule, world);
  // A factor below 1 would ask for a faster worker; the emulation can only add time, so it would do nothing.
  require(e.slowdown.empty() || e.slowdown.smallest() >= 1,
          fmt::format("--slowdown factors must be at least 1 (1: full speed), got {}", e.slowdown.smallest()));
  require(e.slowdown.empty() || e.nodeSpeed.empty(), "--slowdown and --node-speed exclude each other");
  if (!raw.netDelayMs.empty())
    e.netDelayMs = emulation::FactorSchedule::perNode("--net-delay-ms", raw.netDelayMs, world, /*allowZero=*/true);
  if (!raw.netBandwidthMbps.empty())
    e.netBandwidthMbps =
        emulation::FactorSchedule::perNode("--net-bandwidth-mbps", raw.netBandwidthMbps, world, /*allowZero=*/true);
}

}  // namespace balancenet::cli
