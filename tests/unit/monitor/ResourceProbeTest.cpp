// Tests of the pure probes: resident memory and its peak, node memory, GEMM throughput.
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "balancenet/core/Error.h"
#include "balancenet/metrics/GemmProbe.h"
#include "balancenet/metrics/ResourceProbe.h"

namespace balancenet::metrics {
namespace {

TEST(ResourceProbe, ResidentMemoryGrowsByAFreshlyTouchedBuffer) {
  constexpr size_t kBytes = size_t{200} << 20;
  const double before = residentBytes();
  ASSERT_GT(before, 0);
  std::unique_ptr<char[]> buffer(new char[kBytes]);
  std::memset(buffer.get(), 1, kBytes);  // touching every page is what makes it resident
  const double after = residentBytes();
  EXPECT_EQ(buffer[kBytes - 1], 1);
  EXPECT_GT(after - before, 0.9 * kBytes);
  EXPECT_LT(after - before, 1.2 * kBytes);
}

// The peak is a high-water mark: it only grows once resident memory passes it, so the buffer is sized to
// reach 200 MB beyond the peak so far (an earlier test may have freed a bigger buffer).
TEST(ResourceProbe, PeakResidentGrowsPastItsMarkAndNeverTrailsResident) {
  constexpr double kGrowth = double(size_t{200} << 20);
  // Resident first: the process touches a few pages between two reads (the file buffers), so a resident
  // figure read after the peak may exceed it by those.
  const double residentBefore = residentBytes();
  const double peakBefore = peakResidentBytes();
  ASSERT_GT(peakBefore, 0);
  EXPECT_GE(peakBefore, residentBefore);
  const auto bytes = static_cast<size_t>(peakBefore - residentBefore + kGrowth);
  std::unique_ptr<char[]> buffer(new char[bytes]);
  std::memset(buffer.get(), 1, bytes);
  const double residentAfter = residentBytes();
  const double peakAfter = peakResidentBytes();
  EXPECT_EQ(buffer[bytes - 1], 1);
  EXPECT_GT(peakAfter - peakBefore, 0.9 * kGrowth);
  EXPECT_GE(peakAfter, residentAfter);
}

TEST(ResourceProbe, NodeMemoryTotalExceedsAvailable) {
  const double total = nodeMemoryTotalBytes();
  const double available = nodeMemoryAvailableBytes();
  EXPECT_GT(available, 0);
  EXPECT_GT(total, available);
  EXPECT_GT(total, residentBytes());
}

TEST(GemmProbe, ReturnsPlausibleFlopsAndHonoursItsDuration) {
  const auto start = std::chrono::steady_clock::now();
  const double flops = measureGemmFlops(0.2);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(std::isfinite(flops));
  EXPECT_GT(flops, 1e8);
  EXPECT_LT(flops, 1e15);  // no machine this runs on does a petaflop on one CPU
  EXPECT_GE(seconds, 0.2);
  EXPECT_LT(seconds, 5.0);
}

// A worker probes right after seeding and building its model: the dropout masks of its first steps must
// not depend on the probe (they are then the same as in a PyTorch run with the same seed).
TEST(GemmProbe, LeavesTheGlobalRandomStreamAlone) {
  at::manual_seed(7);
  const auto expected = at::rand({8});
  at::manual_seed(7);
  measureGemmFlops(0.01);
  EXPECT_TRUE(at::equal(at::rand({8}), expected));
}

TEST(GemmProbe, PeakMeasuresOneThreadAndAllAndRestoresTheThreads) {
  at::set_num_threads(1);
  const auto peak = measureGemmPeak(0.02);
  EXPECT_EQ(at::get_num_threads(), 1);
  EXPECT_GE(peak.threads, 1);
  EXPECT_GT(peak.oneThread, 1e8);
  EXPECT_LT(peak.oneThread, 1e13);
  // Measured too, in FLOP/s. Not compared with the one-thread figure: with the cores busy, a product split
  // over threads waits for its slowest one (seen under load: 5.6 against 49 GFLOP/s); speed is for bench/.
  EXPECT_GT(peak.allThreads, 1e8);
  EXPECT_LT(peak.allThreads, 1e13);
}

// The worker, the pipeline's column heads and the Python session all ask for the process's peak (GroupWiring): the
// probe runs at the first call only, and a second device is a wiring mistake, not a second probe.
TEST(GemmProbe, ProcessPeakIsMeasuredOncePerProcess) {
  const c10::Device cpu(c10::DeviceType::CPU);
  const auto before = std::chrono::steady_clock::now();
  const GemmPeak& first = processGemmPeak(cpu);
  const auto probed = std::chrono::steady_clock::now();
  const GemmPeak& again = processGemmPeak(cpu);
  const auto remembered = std::chrono::steady_clock::now();
  EXPECT_EQ(&first, &again);
  EXPECT_GT(first.oneThread, 1e8);
  EXPECT_GE(probed - before, std::chrono::milliseconds(40));  // two timed runs of about 0.05 s each
  EXPECT_LT(remembered - probed, (probed - before) / 2);      // no second probe: microseconds against 0.1 s
  EXPECT_THROW(processGemmPeak(c10::Device(c10::DeviceType::CUDA, 0)), InternalError);
}

TEST(GemmProbe, RateWithThreadsIsExactAtTheMeasuredPointsAndScalesBetween) {
  const GemmPeak peak{10e9, 30e9, 4};
  EXPECT_DOUBLE_EQ(rateWithThreads(peak, 1), 10e9);
  EXPECT_DOUBLE_EQ(rateWithThreads(peak, 2), 20e9);
  EXPECT_DOUBLE_EQ(rateWithThreads(peak, 4), 30e9);  // the measured all-threads rate, not 4 x 10e9
  EXPECT_DOUBLE_EQ(rateWithThreads(peak, 0), 10e9);  // an unknown count is one thread
  // A busy machine can measure all threads below one (see the test above): never under the one-thread rate.
  EXPECT_DOUBLE_EQ(rateWithThreads({10e9, 5e9, 2}, 2), 10e9);
}

}  // namespace
}  // namespace balancenet::metrics
