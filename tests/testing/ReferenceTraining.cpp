// Deliberately naive: the whole batch in one forward, nothing shared with the Trainer but the
// model factory, the sampler and the optimiser/schedule definitions it is compared under.
#include "testing/ReferenceTraining.h"

#include <torch/nn/utils/clip_grad.h>

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>

#include <algorithm>
#include <mutex>

#include "balancenet/data/GlobalPermutationSampler.h"

namespace balancenet::testing {

trainer::TrainerOptions comparisonOptions(const std::string& optimizer, int64_t steps, int64_t globalBatch,
                                          double weightDecay) {
  trainer::TrainerOptions o;
  o.steps = steps;
  o.globalBatch = globalBatch;
  o.seed = 7;
  o.lr.baseLr = optimizer == "adam" ? 0.01 : 0.1;
  o.lr.warmupSteps = 2;
  o.lr.decay = trainer::LrSchedule::Decay::Cosine;
  o.lr.totalSteps = steps;
  o.optimizer.name = optimizer;
  o.optimizer.momentum = 0.9;
  o.optimizer.weightDecay = weightDecay;
  o.evalAtEnd = false;
  o.progressSeconds = 0;
  return o;
}

models::ModelOptions comparisonModel(const std::string& name) {
  models::ModelOptions m;
  m.name = name;
  m.width = 0.25;
  m.dropout = 0;
  return m;
}

models::BuiltModel seededComparisonModel(const std::string& name, uint64_t seed) {
  return seededModel(comparisonModel(name), seed);
}

models::BuiltModel seededModel(const models::ModelOptions& model, uint64_t seed) {
  static std::mutex rngMutex;
  std::lock_guard<std::mutex> lock(rngMutex);
  at::manual_seed(seed);
  return models::buildModel(model);
}

namespace {

// The forward pass and loss under options.precision as a PyTorch user writes it: torch.autocast around them, and
// for fp16 GradScaler's rule spelled out (the scale's growth interval is never reached in these short runs).
at::Tensor referenceLoss(models::Network& net, const objective::Objective& objective, const data::Batch& batch,
                         const trainer::TrainerOptions& options, c10::Device device) {
  const bool autocast = options.precision != precision::Precision::Fp32;
  if (autocast) {
    at::autocast::set_autocast_dtype(device.type(), precision::lowType(options.precision));
    at::autocast::set_autocast_enabled(device.type(), true);
  }
  auto mean = objective.trainingLossSum(net.forward(batch.inputs.to(device)), batch.targets.to(device)) /
              static_cast<double>(options.globalBatch);
  if (autocast) {
    at::autocast::set_autocast_enabled(device.type(), false);
    at::autocast::clear_cache();
  }
  return mean.to(at::kFloat);
}

std::vector<at::Tensor> trainLoop(models::Network& net, const trainer::TrainerOptions& options,
                                  const data::Dataset& train, const objective::ObjectiveOptions& loss,
                                  bool reversedBatches) {
  const objective::Objective objective(train.spec(), loss);
  net.train();
  std::vector<at::Tensor> params;
  for (auto& p : net.parameters()) params.push_back(p);
  auto optimizer = trainer::makeOptimizer(options.optimizer, params, options.lr.at(0));
  data::GlobalPermutationSampler sampler(train.size(), options.seed);
  double scale = precision::scalesLoss(options.precision) ? 65536.0 : 1.0;
  for (int64_t step = 0; step < options.steps; ++step) {
    trainer::setLearningRate(*optimizer, options.lr.at(step));
    auto draws = sampler.drawsAt(step * options.globalBatch, options.globalBatch);
    if (reversedBatches) std::reverse(draws.begin(), draws.end());
    const data::Batch batch = train.trainingBatch(draws);
    const auto device = params.front().device();  // the caller's network may be on a GPU: the batch follows it
    optimizer->zero_grad();
    const auto mean = referenceLoss(net, objective, batch, options, device);
    (mean * scale).backward();
    if (scale != 1.0) {
      bool finite = true;
      for (auto& p : params)
        if (p.grad().defined()) {
          p.mutable_grad().div_(scale);
          finite = finite && at::isfinite(p.grad()).all().item<bool>();
        }
      if (!finite) {  // skipped, and the scale halved
        scale /= 2;
        continue;
      }
    }
    // libtorch's own clipping is the reference for --clip-grad-norm.
    if (options.clipGradNorm > 0) torch::nn::utils::clip_grad_norm_(params, options.clipGradNorm);
    optimizer->step();
  }
  std::vector<at::Tensor> out;  // on the host, whatever the device
  for (auto& p : net.parameters()) out.push_back(p.detach().to(at::kCPU, false, /*copy=*/true));
  for (auto& b : net.buffers()) out.push_back(b.detach().to(at::kCPU, false, /*copy=*/true));
  return out;
}

}  // namespace

std::vector<at::Tensor> referenceTraining(const models::ModelOptions& model, const trainer::TrainerOptions& options,
                                          const data::Dataset& train, const objective::ObjectiveOptions& loss) {
  at::manual_seed(options.seed);
  auto built = models::buildModel(model);
  return referenceTraining(*built.net, options, train, loss);
}

std::vector<at::Tensor> referenceTraining(models::Network& net, const trainer::TrainerOptions& options,
                                          const data::Dataset& train, const objective::ObjectiveOptions& loss) {
  return trainLoop(net, options, train, loss, /*reversedBatches=*/false);
}

std::vector<at::Tensor> reorderedReferenceTraining(const models::ModelOptions& model,
                                                   const trainer::TrainerOptions& options, const data::Dataset& train,
                                                   const objective::ObjectiveOptions& loss) {
  at::manual_seed(options.seed);
  auto built = models::buildModel(model);
  return reorderedReferenceTraining(*built.net, options, train, loss);
}

std::vector<at::Tensor> reorderedReferenceTraining(models::Network& net, const trainer::TrainerOptions& options,
                                                   const data::Dataset& train,
                                                   const objective::ObjectiveOptions& loss) {
  return trainLoop(net, options, train, loss, /*reversedBatches=*/true);
}

double maxAbsDifference(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  if (a.size() != b.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].sizes().equals(b[i].sizes())) return INFINITY;
    const auto x = a[i].to(at::kCPU).to(at::kDouble), y = b[i].to(at::kCPU).to(at::kDouble);
    worst = std::max(worst, (x - y).abs().max().item<double>());
  }
  return worst;
}

}  // namespace balancenet::testing
