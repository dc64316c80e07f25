// The engine's promise on GPUs: workers with unequal shares train exactly like one process on the whole global
// batch, whether their GPU gradients sum through Gloo's host copies (GPU workers sharing a GPU, or beside CPU
// workers) or by NCCL (a GPU each). The reference is the golden single-process loop (testing/ReferenceTraining).
#include <ATen/ATen.h>

#include <algorithm>

#include "balancenet/comm/BucketedAllReduceSync.h"
#include "balancenet/comm/FactorLinear.h"
#include "balancenet/comm/FlatAllReduceSync.h"
#include "balancenet/comm/OffloadSync.h"
#include "balancenet/comm/SufficientFactorSync.h"
#include "balancenet/orchestrator/StaticAllocator.h"
#include "balancenet/trainer/TrainingState.h"
#include "gpu/GpuCases.h"
#include "testing/DistributedTraining.h"
#include "testing/FloatBound.h"
#include "testing/ReferenceTraining.h"
#include "testing/SmallRuns.h"
#include "testing/SyntheticData.h"
#include "testing/ThreadRanks.h"

namespace balancenet::testing {
namespace {

const c10::Device kCpu(c10::DeviceType::CPU);
c10::Device gpu(int index) { return c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index)); }

// Flat: one all-reduce after backward; Buckets: DDP-style buckets started from backward's hooks; Offload: a rank
// whose share is below a quarter of the largest hands its gradient to a ring peer (--offload-below, the default).
enum class Sync { Flat, Buckets, Offload };

struct GpuRun {
  std::string model;
  std::vector<int64_t> split;
  std::function<c10::Device(int)> device;
  Sync sync = Sync::Buckets;
  bool nccl = false;
};

// The run on thread ranks against one process on `referenceDevice`, printed and returned as (difference, bound).
std::pair<double, double> compare(const GpuRun& r, const c10::Device& referenceDevice) {
  const auto train = syntheticDataset(300, 3);
  const Split split{r.split};
  const auto options = comparisonOptions("sgd", 5, split.total(), 5e-4);
  DistributedRun run{split.worldSize(), [&] { return std::make_unique<orchestrator::StaticAllocator>(split); }};
  run.device = r.device;
  run.nccl = r.nccl;
  if (r.sync != Sync::Flat)
    run.sync = [sync = r.sync](comm::Communicator& comm, models::Network& net) -> std::unique_ptr<comm::GradientSync> {
      comm::BucketOptions buckets;
      buckets.bucketMb = 0.05;  // several buckets, each started from backward's hooks
      buckets.firstBucketMb = 0.01;
      const auto params = comm::namedParameters(net);
      auto bucketed = std::make_unique<comm::BucketedAllReduceSync>(comm, params, buckets);
      if (sync == Sync::Buckets) return bucketed;
      return std::make_unique<comm::OffloadSync>(comm, params, std::move(bucketed), 0.25);
    };
  const auto dist = distributedTraining(comparisonModel(r.model), options, train, run);
  auto built = seededModel(comparisonModel(r.model), options.seed);
  built.net->to(referenceDevice);
  const auto ref = referenceTraining(*built.net, options, train);
  const double diff = maxAbsDifference(dist, ref);
  const double bound = exactnessBound(ref, options.steps);
  std::printf("%s split %s vs one process on %s: max |param difference| %.3g (float bound %.3g)\n", r.model.c_str(),
              split.str().c_str(), referenceDevice.str().c_str(), diff, bound);
  return {diff, bound};
}

TEST(GpuGloo, UnequalSharesOnWorkersSharingAGpuMatchOneProcess) {
  BALANCENET_NEEDS_GPUS(1);
  for (const char* model : {"mlp", "cnn"})
    for (Sync sync : {Sync::Buckets, Sync::Flat, Sync::Offload}) {  // offload: 8 is below a quarter of 40
      const auto [diff, bound] = compare({model, {40, 8}, [](int) { return gpu(0); }, sync}, gpu(0));
      EXPECT_LT(diff, bound) << model;
    }
}

TEST(GpuMixed, OneGpuWorkerBesideCpuWorkersMatchesOneProcess) {
  BALANCENET_NEEDS_GPUS(1);
  for (Sync sync : {Sync::Buckets, Sync::Flat, Sync::Offload}) {
    // Offload: ranks 1 and 2 (5 and 3 samples, below a quarter of 40) hand their gradients to the GPU worker.
    const std::vector<int64_t> split =
        sync == Sync::Offload ? std::vector<int64_t>{40, 5, 3} : std::vector<int64_t>{30, 5, 13};
    const GpuRun run{"cnn", split, [](int rank) { return rank == 0 ? gpu(0) : kCpu; }, sync};
    const auto [diffCpu, boundCpu] = compare(run, kCpu);
    EXPECT_LT(diffCpu, boundCpu);
    const auto [diffGpu, boundGpu] = compare(run, gpu(0));
    EXPECT_LT(diffGpu, boundGpu);
  }
}

TEST(GpuNccl, UnequalSharesOnAGpuEachMatchOneProcess) {
  BALANCENET_NEEDS_GPUS(2);                                       // NCCL takes one rank per GPU
  for (Sync sync : {Sync::Buckets, Sync::Flat, Sync::Offload}) {  // offload: NCCL's sends
    const auto [diff, bound] = compare({"cnn", {7, 41}, [](int rank) { return gpu(rank); }, sync, true}, gpu(0));
    EXPECT_LT(diff, bound);
  }
}

// Poseidon's sufficient factors (--comm sfb) and the per-layer choice (hybrid) on workers sharing a GPU: each fully
// connected layer's gradient rebuilt from every rank's factors on the GPU, against one process there.
TEST(GpuFactors, SfbAndHybridOnGpuWorkersMatchOneProcess) {
  BALANCENET_NEEDS_GPUS(1);
  const auto train = syntheticDataset(300, 3);
  const Split split{{24, 8}};
  const auto options = comparisonOptions("sgd", 5, split.total(), 5e-4);
  for (bool hybrid : {false, true}) {
    DistributedRun run{split.worldSize(), [&] { return std::make_unique<orchestrator::StaticAllocator>(split); }};
    run.device = [](int) { return gpu(0); };
    run.linear = comm::factorLinearFactory();
    run.sync = [&](comm::Communicator& comm, models::Network& net) -> std::unique_ptr<comm::GradientSync> {
      comm::FactorSyncOptions factors;
      factors.hybrid = hybrid;
      factors.initialBatches = split.batches;
      factors.buckets.firstBucketMb = 0.01;  // the convolutions' buckets, interleaved with the factors
      factors.buckets.bucketMb = 0.05;
      return std::make_unique<comm::SufficientFactorSync>(comm, net, factors);
    };
    const auto dist = distributedTraining(comparisonModel("cnn"), options, train, run);
    auto one = seededModel(comparisonModel("cnn"), options.seed);
    one.net->to(gpu(0));
    const auto ref = referenceTraining(*one.net, options, train);
    const double diff = maxAbsDifference(dist, ref);
    const double bound = exactnessBound(ref, options.steps);
    std::printf("cnn %s split %s vs one process on %s: max |param difference| %.3g (float bound %.3g)\n",
                hybrid ? "hybrid" : "sfb", split.str().c_str(), gpu(0).str().c_str(), diff, bound);
    EXPECT_LT(diff, bound);
  }
}

// --sync-bn on GPU workers sharing a GPU: batch statistics over the whole global batch, as one process's BatchNorm.
// The bound is the CPU test's (multirank/SyncBatchNormTest.cpp): rounding decides discrete choices in a resnet, so
// twice the reference's own spread (its batches reversed) on the GPU, or the float bound where larger.
TEST(GpuSyncBn, UnequalSharesMatchOneProcessBatchNorm) {
  BALANCENET_NEEDS_GPUS(1);
  const auto train = syntheticDataset(200, 5);
  const Split split{{3, 1, 20}};
  auto options = sgdRun(3, split.total(), 11);
  options.lr.baseLr = 0.05;
  models::ModelOptions resnet;
  resnet.name = "resnet18";
  resnet.width = 0.125;
  DistributedRun run{split.worldSize(), [&] { return std::make_unique<orchestrator::StaticAllocator>(split); }, true};
  run.device = [](int) { return gpu(0); };
  const auto dist = distributedTraining(resnet, options, train, run);
  auto one = seededModel(resnet, options.seed);
  one.net->to(gpu(0));
  const auto ref = referenceTraining(*one.net, options, train);
  auto reversed = seededModel(resnet, options.seed);
  reversed.net->to(gpu(0));
  const double spread = maxAbsDifference(reorderedReferenceTraining(*reversed.net, options, train), ref);
  const double bound = std::max(exactnessBound(ref, options.steps), 2 * spread);
  const double diff = maxAbsDifference(dist, ref);
  std::printf("sync-bn split %s on %s: max |param and running-stat difference| %.3g (spread %.3g, bound %.3g)\n",
              split.str().c_str(), gpu(0).str().c_str(), diff, spread, bound);
  EXPECT_LT(diff, bound);
}

// A GPU worker's state (a checkpoint, what a joiner receives) resumes on a CPU worker: parameters travel on the
// host, the optimiser's momentum is mapped onto the restoring worker's device. 3 steps on the GPU then 3 on the CPU
// end where 6 on the CPU do.
TEST(GpuState, AGpuWorkersStateResumesOnACpuWorker) {
  BALANCENET_NEEDS_GPUS(1);
  const auto train = syntheticDataset(300, 3);
  auto options = comparisonOptions("sgd", 6, 32, 5e-4);  // momentum 0.9: the optimiser's state matters
  const auto reference = referenceTraining(comparisonModel("mlp"), options, train);
  runRanks(1, [&](comm::Communicator& comm) {
    const objective::Objective objective(train.spec(), {});
    orchestrator::StaticAllocator allocator(Split{{32}});
    comm::FlatAllReduceSync sync(comm);
    auto onGpu = seededModel(comparisonModel("mlp"), options.seed);
    onGpu.net->to(gpu(0));
    trainer::Trainer first(options, {*onGpu.net, train, nullptr, objective, comm, sync, allocator});
    for (int s = 0; s < 3; ++s) first.step();
    const std::string state = trainer::toBytes(first.captureState());

    auto onCpu = seededModel(comparisonModel("mlp"), options.seed + 1);  // another start: the state must replace it
    trainer::Trainer second(options, {*onCpu.net, train, nullptr, objective, comm, sync, allocator});
    second.restoreState(trainer::fromBytes(state));
    for (int s = 3; s < 6; ++s) second.step();
    const double diff = maxAbsDifference(second.parameters(), reference);
    const double bound = exactnessBound(reference, options.steps);
    std::printf("3 steps on cuda:0, 3 on the CPU vs 6 on the CPU: max |param difference| %.3g (float bound %.3g)\n",
                diff, bound);
    EXPECT_LT(diff, bound);
  });
}

// The operations c10d's Gloo does not take GPU tensors for go through host copies (Communicator.h).
TEST(GpuGloo, PointToPointAndTheMeshExchangesCarryGpuTensors) {
  BALANCENET_NEEDS_GPUS(1);
  runRanks(2, [](comm::Communicator& comm) {
    const auto options = at::TensorOptions().dtype(at::kFloat).device(gpu(0));
    auto t = at::arange(1000, options) * static_cast<double>(comm.rank() + 1);
    for (auto exchange : {comm::Exchange::HalvingDoubling, comm::Exchange::AllToAll, comm::Exchange::Ring}) {
      auto sum = t.clone();
      comm.allreduceSum(sum, exchange);
      EXPECT_TRUE(sum.is_cuda());
      EXPECT_TRUE(at::equal(sum.cpu(), (at::arange(1000, at::kFloat) * 3)));
    }
    auto message = comm.rank() == 0 ? at::full({64}, 7.0, options) : at::zeros({64}, options);
    if (comm.rank() == 0)
      comm.send(message, 1, 3);
    else
      comm.recv(message, 0, 3);
    EXPECT_TRUE(at::equal(message.cpu(), at::full({64}, 7.0, at::kFloat)));
    const auto gathered = comm.allgather(at::full({4}, static_cast<double>(comm.rank()), options));
    ASSERT_EQ(gathered.size(), 2u);
    EXPECT_EQ(gathered[1].sum().item<float>(), 4.0f);
  });
}

}  // namespace
}  // namespace balancenet::testing
