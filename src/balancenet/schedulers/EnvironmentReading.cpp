// Reading integers from the environment, with one-line errors for malformed values.
#include "balancenet/schedulers/EnvironmentReading.h"

#include <cctype>
#include <cstdlib>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/ParseNumber.h"

namespace balancenet::schedulers {

Environment processEnvironment() {
  return [](const std::string& name) {
    const char* v = std::getenv(name.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
}

int environmentInteger(const std::string& name, const std::string& value, int min, int max) {
  const bool digitFirst = !value.empty() && std::isdigit(static_cast<unsigned char>(value.front()));
  const auto v = digitFirst ? parseInteger<int>(value) : std::nullopt;
  if (!v || *v < min || *v > max)
    throw UsageError(fmt::format("environment variable {}='{}' must be an integer in [{}, {}]", name, value, min, max));
  return *v;
}

std::optional<Sourced<int>> readInteger(const Environment& env, const std::string& name, int min, int max) {
  const auto text = env(name);
  if (!text) return std::nullopt;
  return Sourced<int>{environmentInteger(name, *text, min, max), name};
}

std::optional<SchedulerReading> readWorkerVariables(const Environment& env, const WorkerVariables& v) {
  if (!env(v.rank)) return std::nullopt;
  if (!env(v.worldSize))
    throw UsageError(fmt::format("{} is set but {} is not; a {} launch sets both", v.rank, v.worldSize, v.scheduler));
  constexpr int kMany = 1 << 20;
  SchedulerReading r;
  r.scheduler = v.scheduler;
  r.worldSize = readInteger(env, v.worldSize, 1, kMany);
  r.rank = readInteger(env, v.rank, 0, r.worldSize->value - 1);
  // Not bounded by the world: a user may count other jobs' processes on the host, to share its cores with them.
  if (v.localWorldSize) r.localWorldSize = readInteger(env, v.localWorldSize, 1, kMany);
  const int localWorld = r.localWorldSize ? r.localWorldSize->value : r.worldSize->value;
  if (v.localRank) r.localRank = readInteger(env, v.localRank, 0, localWorld - 1);
  return r;
}

}  // namespace balancenet::schedulers
