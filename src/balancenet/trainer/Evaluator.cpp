// Sharded evaluation.
#include "balancenet/trainer/Evaluator.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace balancenet::trainer {

void EvalTotals::add(const objective::Objective& objective, const at::Tensor& outputs, const at::Tensor& targets) {
  lossSum_ += objective.lossSum(outputs, targets).item<double>();
  correct_ += objective.correctSum(outputs, targets);
  counted_ += static_cast<double>(targets.size(0));
}

metrics::EvalPoint EvalTotals::point(comm::Collectives& comm, int64_t step) const {
  auto totals = at::tensor({correct_, lossSum_, counted_}, at::kDouble);
  comm.allreduceSum(totals);
  const double count = totals[2].item<double>();
  return {step, totals[0].item<double>() / count, totals[1].item<double>() / count, 0, static_cast<int64_t>(count)};
}

metrics::EvalPoint EvalTotals::localPoint(int64_t step) const {
  const double count = std::max(counted_, 1.0);
  return {step, correct_ / count, lossSum_ / count, 0, static_cast<int64_t>(counted_)};
}

EvalTotals countTestSamples(models::Network& net, const data::Dataset& test, const objective::Objective& objective,
                            int64_t begin, int64_t end, int64_t batchSize) {
  const bool wasTraining = net.is_training();
  net.eval();
  EvalTotals totals;
  const auto params = net.parameters();
  const c10::Device device = params.empty() ? c10::Device(c10::DeviceType::CPU) : params.front().device();
  {
    at::NoGradGuard noGrad;
    for (int64_t b = begin; b < end; b += batchSize) {
      const int64_t len = std::min(batchSize, end - b);
      const data::Batch batch = test.batch(data::indexRange(b, b + len));
      totals.add(objective, net.forward(batch.inputs.to(device)), batch.targets.to(device));
    }
  }
  net.train(wasTraining);
  return totals;
}

metrics::EvalPoint evaluate(models::Network& net, const data::Dataset& test, const objective::Objective& objective,
                            comm::Collectives& comm, int64_t step, int64_t batchSize) {
  const int64_t n = test.size();
  const int64_t begin = n * comm.rank() / comm.size();
  const int64_t end = n * (comm.rank() + 1) / comm.size();
  return countTestSamples(net, test, objective, begin, end, batchSize).point(comm, step);
}

}  // namespace balancenet::trainer
