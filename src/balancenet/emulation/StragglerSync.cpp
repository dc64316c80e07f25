// Emulated stragglers.
#include "balancenet/emulation/StragglerSync.h"

#include <chrono>
#include <thread>

#include <spdlog/spdlog.h>

#include "balancenet/core/Stopwatch.h"

namespace balancenet::emulation {

StragglerSync::StragglerSync(std::unique_ptr<comm::GradientSync> inner, Mode mode, FactorSchedule factors, int rank)
    : inner_(std::move(inner)), mode_(mode), factors_(std::move(factors)), rank_(rank) {}

comm::SyncStats StragglerSync::synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars,
                                           const comm::SyncContext& context) {
  const double factor = factors_.at(context.step, rank_);
  // A left-out rank is paced for its probe's samples: its speed is what the policy reads off them.
  const int64_t samples = context.localBatch > 0 ? context.localBatch : context.probeSamples;
  const double sleepMs =
      paceSleepMs(mode_ == Mode::Relative ? PaceMode::Relative : PaceMode::Paced, factor, context.computeMs, samples);
  if (mode_ == Mode::Paced) {
    const double paceMs = sleepMs + context.computeMs;
    if (sleepMs < 0 && context.step - lastWarningStep_ >= 100 && context.step >= 5) {
      spdlog::warn(
          "rank {}: real compute {:.0f} ms exceeds the pace {:.0f} ms ({} samples at {} samples/s) at step {}: "
          "this worker is slower than asked",
          rank_, context.computeMs, paceMs, samples, factor, context.step);
      lastWarningStep_ = context.step;
    }
  }
  Stopwatch slept;
  if (sleepMs > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(sleepMs));
  const double emulated = slept.elapsedMs();
  auto stats = inner_->synchronize(grads, scalars, context);
  stats.elapsedMs += emulated;
  stats.emulatedComputeMs += emulated;
  return stats;
}

}  // namespace balancenet::emulation
