// Emulated link latency.
#include "balancenet/emulation/NetworkDelaySync.h"

#include <chrono>
#include <thread>

#include "balancenet/core/Stopwatch.h"

namespace balancenet::emulation {

NetworkDelaySync::NetworkDelaySync(std::unique_ptr<comm::GradientSync> inner, double delayMs)
    : inner_(std::move(inner)), delayMs_(delayMs) {}

comm::SyncStats NetworkDelaySync::synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars,
                                              const comm::SyncContext& context) {
  Stopwatch watch;
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(delayMs_));
  auto stats = inner_->synchronize(grads, scalars, context);
  stats.elapsedMs = watch.elapsedMs();
  return stats;
}

}  // namespace balancenet::emulation
