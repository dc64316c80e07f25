// Synchronised batch normalisation as a custom autograd function.
//
// Forward, over all ranks' samples (N in total):   mean = sum(x)/N,  var = sum(x^2)/N - mean^2
// Backward, with dy the gradient of this rank's outputs and xhat the normalised input:
//   dx = w / sqrt(var + eps) * (dy - sum_all(dy)/N - xhat * sum_all(dy*xhat)/N)
// where sum_all is all-reduced. dw and db stay local sums: the gradient sync adds them up across ranks.
#include "balancenet/comm/SyncBatchNorm.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include "balancenet/core/Error.h"

namespace balancenet::comm {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

at::Tensor perChannel(const at::Tensor& v) { return v.view({1, -1, 1, 1}); }

struct SyncBatchNormFunction : public torch::autograd::Function<SyncBatchNormFunction> {
  static variable_list forward(AutogradContext* ctx, at::Tensor x, at::Tensor weight, at::Tensor bias,
                               at::Tensor runningMean, at::Tensor runningVar, double momentum, double eps,
                               int64_t commHandle) {
    auto* comm = reinterpret_cast<Collectives*>(commHandle);
    const int64_t channels = x.size(1);
    const double localCount = static_cast<double>(x.numel() / channels);
    auto xd = x.to(at::kDouble);  // double sums keep E[x^2]-E[x]^2 accurate
    auto stats = at::cat({xd.sum({0, 2, 3}), (xd * xd).sum({0, 2, 3}), at::full({1}, localCount, xd.options())});
    comm->allreduceSum(stats);
    const double count = stats[2 * channels].item<double>();
    auto mean = stats.narrow(0, 0, channels) / count;
    auto var = (stats.narrow(0, channels, channels) / count - mean * mean).clamp_min(0);
    auto invstd = (var + eps).rsqrt();

    {
      at::NoGradGuard noGrad;
      runningMean.mul_(1 - momentum).add_(mean.to(runningMean.scalar_type()) * momentum);
      const double unbias = count > 1 ? count / (count - 1) : 1.0;
      runningVar.mul_(1 - momentum).add_(var.to(runningVar.scalar_type()) * (momentum * unbias));
    }
    auto xhat = ((xd - perChannel(mean)) * perChannel(invstd)).to(x.scalar_type());
    auto y = xhat * perChannel(weight) + perChannel(bias);
    ctx->save_for_backward({xhat, weight, invstd.to(x.scalar_type())});
    ctx->saved_data["count"] = count;
    ctx->saved_data["comm"] = commHandle;
    return {y};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto saved = ctx->get_saved_variables();
    auto xhat = saved[0], weight = saved[1], invstd = saved[2];
    auto* comm = reinterpret_cast<Collectives*>(ctx->saved_data["comm"].toInt());
    const double count = ctx->saved_data["count"].toDouble();
    auto dy = grads[0];
    const int64_t channels = dy.size(1);

    auto sumDy = dy.sum({0, 2, 3});
    auto sumDyXhat = (dy * xhat).sum({0, 2, 3});
    auto global = at::cat({sumDy, sumDyXhat}).to(at::kDouble);
    comm->allreduceSum(global);
    auto meanDy = (global.narrow(0, 0, channels) / count).to(dy.scalar_type());
    auto meanDyXhat = (global.narrow(0, channels, channels) / count).to(dy.scalar_type());

    auto dx = perChannel(weight * invstd) * (dy - perChannel(meanDy) - xhat * perChannel(meanDyXhat));
    return {dx, sumDyXhat, sumDy, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

SyncBatchNorm2dImpl::SyncBatchNorm2dImpl(int64_t channels, Collectives* comm, double momentum, double eps)
    : channels_(channels), comm_(comm), momentum_(momentum), eps_(eps) {
  reset();
}

void SyncBatchNorm2dImpl::reset() {
  weight = register_parameter("weight", at::ones({channels_}));
  bias = register_parameter("bias", at::zeros({channels_}));
  running_mean = register_buffer("running_mean", at::zeros({channels_}));
  running_var = register_buffer("running_var", at::ones({channels_}));
  num_batches_tracked = register_buffer("num_batches_tracked", at::zeros({}, at::kLong));
}

at::Tensor SyncBatchNorm2dImpl::forward(const at::Tensor& x) {
  if (!is_training()) return at::batch_norm(x, weight, bias, running_mean, running_var, false, momentum_, eps_, false);
  if (!comm_) throw RuntimeFailure("SyncBatchNorm2d trained without a group (useGroupForSyncBatchNorm not called)");
  {
    at::NoGradGuard noGrad;
    num_batches_tracked.add_(1);
  }
  return SyncBatchNormFunction::apply(x, weight, bias, running_mean, running_var, momentum_, eps_,
                                      reinterpret_cast<int64_t>(comm_))[0];
}

int useGroupForSyncBatchNorm(torch::nn::Module& net, Collectives* comm) {
  int layers = 0;
  for (auto& module : net.modules()) {
    if (auto* bn = dynamic_cast<SyncBatchNorm2dImpl*>(module.get())) {
      bn->useGroup(comm);
      ++layers;
    }
  }
  return layers;
}

}  // namespace balancenet::comm
