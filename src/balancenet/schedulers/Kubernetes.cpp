// A Kubernetes Indexed Job's pod: its completion index is its node rank, and pod 0 serves the store under the
// stable name a headless service gives it (<job>-0.<service>).
#include <fmt/format.h>

#include "balancenet/core/EnvironmentVariables.h"
#include "balancenet/core/Error.h"
#include "balancenet/schedulers/Launchers.h"

namespace balancenet::schedulers {
std::optional<SchedulerReading> readKubernetes(const Environment& env) {
  auto index = readInteger(env, "JOB_COMPLETION_INDEX", 0, 1 << 20);
  if (!index) return std::nullopt;
  SchedulerReading r;
  r.scheduler = "kubernetes";
  r.nodeRank = index;
  const auto service = env(kK8sServiceVar);
  const auto host = env("HOSTNAME");
  const std::string suffix = fmt::format("-{}", index->value);
  if (service && host && host->size() > suffix.size() &&
      host->compare(host->size() - suffix.size(), suffix.size(), suffix) == 0) {
    const std::string job = host->substr(0, host->size() - suffix.size());
    r.masterAddr = Sourced<std::string>{fmt::format("{}-0.{}", job, *service),
                                        fmt::format("pod 0 of HOSTNAME={} under BALANCENET_K8S_SERVICE", *host)};
  } else if (service) {
    throw UsageError(
        fmt::format("JOB_COMPLETION_INDEX={} but HOSTNAME='{}' does not end in '{}': cannot name pod 0 "
                    "(an Indexed Job's pods are <job>-<index>); set MASTER_ADDR",
                    index->value, host.value_or(""), suffix));
  } else {
    r.masterHint =
        "a Kubernetes Indexed Job needs BALANCENET_K8S_SERVICE (the Job's headless service, so pod 0 is "
        "<job>-0.<service>) or MASTER_ADDR";
  }
  r.masterPort = Sourced<int>{kTorchrunDefaultPort, "the default for Kubernetes pods (set MASTER_PORT to change it)"};
  return r;
}

}  // namespace balancenet::schedulers
