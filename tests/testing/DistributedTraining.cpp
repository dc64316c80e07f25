// Thread-rank training harness.
#include "testing/DistributedTraining.h"

#include <gtest/gtest.h>

#include <mutex>

#include <ATen/DeviceAccelerator.h>

#include "balancenet/comm/FlatAllReduceSync.h"
#include "balancenet/comm/SyncBatchNorm.h"
#include "balancenet/comm/group/GpuGroup.h"
#include "testing/FloatBound.h"
#include "testing/ReferenceTraining.h"
#include "testing/ThreadRanks.h"

namespace balancenet::testing {
namespace {

// A rank's model on its device (a thread rank makes its GPU current for itself), and the group's GPU sums as a worker
// forms them (comm/group/GpuGroup.h): NCCL where asked and every rank has a GPU of its own, else Gloo.
void placeOnDevice(comm::Communicator& comm, models::Network& net, const c10::Device& device, bool nccl) {
  if (device.is_cuda()) at::accelerator::setDeviceIndex(device.index());
  net.to(device);
  device::DeviceOptions options;
  options.backend = nccl ? "nccl" : "gloo";
  comm::attachGpuGroup(comm, device, options, std::chrono::seconds(60));
}

}  // namespace

std::vector<at::Tensor> distributedTraining(const models::ModelOptions& model, const trainer::TrainerOptions& options,
                                            const data::Dataset& train, const DistributedRun& run) {
  const objective::Objective objective(train.spec(), run.loss);
  std::vector<std::vector<at::Tensor>> results(run.world), params(run.world);
  runRanks(
      run.world,
      [&](comm::Communicator& comm) {
        models::ModelOptions mine = model;
        mine.linear = run.linear;
        if (run.syncBatchNorm)
          mine.batchNorm = [&comm](int64_t c) { return torch::nn::AnyModule(comm::SyncBatchNorm2d(c, &comm)); };
        models::BuiltModel built;
        {
          // The global RNG is shared by the thread ranks: seed and build under one lock.
          static std::mutex rngMutex;
          std::lock_guard<std::mutex> lock(rngMutex);
          at::manual_seed(options.seed + 1000 * comm.rank());
          built = models::buildModel(mine);
        }
        if (run.device) placeOnDevice(comm, *built.net, run.device(comm.rank()), run.nccl);
        auto alloc = run.allocator();
        std::unique_ptr<comm::GradientSync> sync =
            run.sync ? run.sync(comm, *built.net) : std::make_unique<comm::FlatAllReduceSync>(comm);
        trainer::TrainerOptions own = options;
        if (run.samplesPerPass) own.samplesPerPass = run.samplesPerPass(comm.rank());
        trainer::Trainer t(own, {*built.net, train, nullptr, objective, comm, *sync, *alloc});
        for (int64_t s = 0; s < options.steps; ++s) t.step();
        std::vector<at::Tensor> out;
        for (auto& p : built.net->parameters()) out.push_back(p.detach().to(at::kCPU, false, /*copy=*/true));
        params[comm.rank()] = out;
        for (auto& b : built.net->buffers()) out.push_back(b.detach().to(at::kCPU, false, /*copy=*/true));
        results[comm.rank()] = out;
      },
      run.store);
  // Ranks apply the same summed gradient, but a strategy may sum it in each rank's own order (factors).
  for (int r = 1; r < run.world; ++r)
    EXPECT_LT(maxAbsDifference(params[0], params[r]), exactnessBound(params[0], options.steps)) << "rank " << r;
  return results[0];
}

}  // namespace balancenet::testing
