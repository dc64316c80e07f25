// DistributedTraining: the Trainer on thread ranks, returning what it learned, for golden comparisons.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include <c10/core/Device.h>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "balancenet/comm/GradientSync.h"
#include "balancenet/comm/group/Communicator.h"
#include "balancenet/data/Dataset.h"
#include "balancenet/models/ModelZoo.h"
#include "balancenet/objective/ObjectiveOptions.h"
#include "balancenet/orchestrator/Allocator.h"
#include "balancenet/trainer/Trainer.h"

namespace balancenet::testing {

struct DistributedRun {
  int world = 2;
  std::function<std::unique_ptr<orchestrator::Allocator>()> allocator;
  bool syncBatchNorm = false;
  // How every rank builds its fully connected layers (strategies that capture factors need theirs).
  models::LinearFactory linear{};
  // The gradient strategy under test; null: the flat all-reduce.
  std::function<std::unique_ptr<comm::GradientSync>(comm::Communicator&, models::Network&)> sync{};
  // The store the ranks meet over (their group's sharedStore()); null: a fresh one. Given, other threads
  // (parameter servers) can form groups with the ranks over it.
  c10::intrusive_ptr<c10d::Store> store{};
  objective::ObjectiveOptions loss{};  // of the dataset's targets
  // Where rank r computes (null: every rank on the CPU). The tensors returned are on the host whatever it is.
  std::function<c10::Device(int rank)> device{};
  // GPU tensors sum by NCCL (a group of its own beside the ranks' Gloo group), not through Gloo's host copies.
  bool nccl = false;
  // The most samples rank r's pass holds (TrainerOptions::samplesPerPass, under --accumulate auto); null: the
  // options' own for every rank.
  std::function<int64_t(int rank)> samplesPerPass{};
};

// Each rank seeds its own model differently (the start-up broadcast must make them equal), runs
// options.steps steps, and the parameters then buffers of rank 0 are returned; the test fails if
// ranks disagree on a parameter (buffers such as local BatchNorm statistics may differ).
std::vector<at::Tensor> distributedTraining(const models::ModelOptions& model, const trainer::TrainerOptions& options,
                                            const data::Dataset& train, const DistributedRun& run);

}  // namespace balancenet::testing
