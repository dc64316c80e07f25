// NetworkDelaySync: adds a per-node latency to every gradient synchronisation (a slow link).
#pragma once
#include <memory>
#include <vector>

#include "balancenet/comm/GradientSync.h"

namespace balancenet::emulation {

// The delay is spent inside the sync, before the collective, so it shows as communication time,
// and (as on a real slow link) every peer waits for it.
class NetworkDelaySync : public comm::GradientSync {
 public:
  NetworkDelaySync(std::unique_ptr<comm::GradientSync> inner, double delayMs);
  comm::SyncStats synchronize(const std::vector<at::Tensor>& grads, at::Tensor& scalars,
                              const comm::SyncContext& context) override;

 private:
  std::unique_ptr<comm::GradientSync> inner_;
  double delayMs_;
};

}  // namespace balancenet::emulation
