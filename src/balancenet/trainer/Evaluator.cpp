// Sharded evaluation.
#include "balancenet/trainer/Evaluator.h"

#include <ATen/ATen.h>

namespace balancenet::trainer {

metrics::EvalPoint evaluate(models::Network& net, const data::MnistDataset& test, comm::Communicator& comm,
                            int64_t step, int64_t batchSize) {
  const int64_t n = test.size();
  const int64_t begin = n * comm.rank() / comm.size();
  const int64_t end = n * (comm.rank() + 1) / comm.size();
  const bool wasTraining = net.is_training();
  net.eval();
  double correct = 0, lossSum = 0;
  {
    at::NoGradGuard noGrad;
    for (int64_t b = begin; b < end; b += batchSize) {
      const int64_t len = std::min(batchSize, end - b);
      auto x = test.images.narrow(0, b, len);
      auto y = test.labels.narrow(0, b, len);
      auto logits = net.forward(x);
      lossSum += at::cross_entropy_loss(logits, y, {}, at::Reduction::Sum).item<double>();
      correct += logits.argmax(1).eq(y).sum().item<double>();
    }
  }
  net.train(wasTraining);
  auto totals = at::tensor({correct, lossSum, static_cast<double>(end - begin)}, at::kDouble);
  comm.allreduceSum(totals);
  const double count = totals[2].item<double>();
  return {step, totals[0].item<double>() / count, totals[1].item<double>() / count};
}

}  // namespace balancenet::trainer
