// GemmProbe: at::mm into a preallocated output, so the timing is the kernel and not the allocator.
#include "balancenet/metrics/GemmProbe.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <utility>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>

#include <fmt/format.h>

#include "balancenet/core/CpuAllowance.h"
#include "balancenet/core/Error.h"
#include "balancenet/core/IntraOpThreads.h"
#include "balancenet/device/DeviceWork.h"

namespace balancenet::metrics {
namespace {

constexpr int64_t kN = 256;  // large enough for the BLAS's peak (measured: 256..1024 within 3% with OpenBLAS)
constexpr double kFlopsPerProduct = 2.0 * kN * kN * kN;

struct Timing {
  int64_t products = 0;
  double seconds = 0;      // all products
  double bestSeconds = 0;  // the fastest one
};

Timing timeProducts(double seconds, int64_t n = kN, const c10::Device& device = c10::Device(c10::DeviceType::CPU)) {
  constexpr int warmUp = 3;  // first calls pay for thread-pool start-up and cold caches
  at::NoGradGuard noGrad;
  // Constants, not at::rand: the probe must not advance the global generator, whose stream the
  // training's dropout masks come from (a run's randomness would depend on whether the probe ran).
  const auto options = at::TensorOptions().dtype(at::kFloat).device(device);
  const auto a = at::full({n, n}, 0.5f, options);
  const auto b = at::full({n, n}, 0.25f, options);
  auto c = at::empty({n, n}, options);
  for (int i = 0; i < warmUp; ++i) at::mm_out(c, a, b);
  device::waitForDevice(device);

  using Clock = std::chrono::steady_clock;
  const auto budget = std::chrono::duration<double>(std::max(seconds, 1e-3));
  const auto start = Clock::now();
  Timing t;
  t.bestSeconds = 1e30;
  std::chrono::duration<double> elapsed{0};
  do {
    const auto before = Clock::now();
    at::mm_out(c, a, b);
    device::waitForDevice(device);  // a GPU's product is done when its kernel is, not when the call returns
    const auto after = Clock::now();
    ++t.products;
    t.bestSeconds = std::min(t.bestSeconds, std::chrono::duration<double>(after - before).count());
    elapsed = after - start;
  } while (elapsed < budget);
  t.seconds = elapsed.count();
  return t;
}

}  // namespace

double measureGemmFlops(double seconds) {
  const auto t = timeProducts(seconds);
  return kFlopsPerProduct * static_cast<double>(t.products) / t.seconds;
}

GemmPeak measureGemmPeak(double secondsEach) {
  const int entry = at::get_num_threads();
  GemmPeak peak;
  // The threads this process may keep busy: its cgroup quota, not only its affinity mask (under a 0.45-core quota
  // the probe ran a thread per core and measured the quota's stalls).
  peak.threads = threadsPerWorker(readCpuAllowance().cores(), 1);
  setIntraOpThreads(1);
  peak.oneThread = kFlopsPerProduct / timeProducts(secondsEach).bestSeconds;
  setIntraOpThreads(peak.threads);
  peak.allThreads = kFlopsPerProduct / timeProducts(secondsEach).bestSeconds;
  setIntraOpThreads(entry);
  return peak;
}

double rateWithThreads(const GemmPeak& peak, int threads) {
  return std::min(peak.oneThread * std::max(threads, 1), std::max(peak.allThreads, peak.oneThread));
}

GemmPeak measureGpuGemmPeak(const c10::Device& device, double seconds) {
  constexpr int64_t n = 2048;
  const double rate = 2.0 * n * n * n / timeProducts(seconds, n, device).bestSeconds;
  return {rate, rate, 1};
}

const GemmPeak& processGemmPeak(const c10::Device& device) {
  static std::mutex mutex;
  static std::optional<std::pair<c10::Device, GemmPeak>> measured;
  std::lock_guard<std::mutex> lock(mutex);
  if (!measured) measured.emplace(device, device.is_cuda() ? measureGpuGemmPeak(device) : measureGemmPeak());
  if (measured->first != device)
    throw InternalError(fmt::format("the GEMM peak was measured on {}, not {}", measured->first.str(), device.str()));
  return measured->second;
}

}  // namespace balancenet::metrics
