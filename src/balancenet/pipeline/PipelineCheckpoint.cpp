// A pipeline's checkpoint state (PipelineTrainer::checkpointState / restoreCheckpoint). The state is the
// whole model's, block by block in the network's order, whatever the partition: replica 0 of every stage
// sends its blocks (with their optimiser state, as a re-partition moves them) to rank 0, which holds the
// whole model while the checkpoint is written. A run may so resume with another cut (a new plan, a live
// move) and still go on exactly: each rank takes the blocks of its stage.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>
#include <unordered_set>

#include "balancenet/core/Error.h"
#include "balancenet/pipeline/BlockMessage.h"
#include "balancenet/pipeline/PipelineTrainer.h"
#include "balancenet/pipeline/TensorListMessage.h"
#include "balancenet/trainer/OptimizerState.h"

namespace balancenet::pipeline {
namespace {

// Above gathering (2^29 + a tag per tensor); each block has its own span, as a re-partition's moves do.
constexpr int kCheckpointTagBase = 3 << 28;
constexpr int kCheckpointTagsPerBlock = 1 << 10;

int checkpointTag(size_t block) {
  const int64_t tag = kCheckpointTagBase + static_cast<int64_t>(block) * kCheckpointTagsPerBlock;
  if (tag + kCheckpointTagsPerBlock > std::numeric_limits<int>::max())
    throw InternalError("too many blocks for the checkpoint tags");
  return static_cast<int>(tag);
}

// Appends block `block`'s message (BlockMessage.h) to the whole-model state.
void appendBlock(const std::vector<at::Tensor>& message, size_t parameters, size_t buffers, size_t block,
                 trainer::TrainingState& state, std::vector<std::vector<at::Tensor>>& optimizer) {
  auto parts = splitBlockMessage(message, parameters, buffers, block);
  for (const auto& t : parts.parameters) state.parameters.push_back(t.detach().clone());
  for (const auto& t : parts.buffers) state.buffers.push_back(t.detach().clone());
  for (auto& s : parts.states) optimizer.push_back(std::move(s));
}

}  // namespace

trainer::EngineCheckpoint PipelineTrainer::checkpointState() {
  auto& g = parts_.groups;
  const int me = g.world.rank();
  // The allocator's state is the first stage's (its replica 0 decides for the columns); rank 0 may sit on
  // another stage.
  const bool decider = g.firstStage() && g.replica() == 0;
  const auto allocators = g.world.allgatherText(decider ? parts_.allocator->saveState() : std::string());
  trainer::EngineCheckpoint checkpoint;
  for (const auto& a : allocators)
    if (!a.empty()) checkpoint.allocator = a;

  const int kept = g.topology.stageOf(0);  // rank 0's own stage: its blocks are at hand
  std::vector<comm::PendingWork> sends;
  if (g.replica() == 0 && g.stageIndex() != kept) {
    const auto range = options_.partition.stages.at(g.stageIndex());
    for (size_t b = range.first; b < range.end; ++b)
      for (auto& w : sendTensorList(g.world, blockMessage(b), 0, checkpointTag(b))) sends.push_back(std::move(w));
  }
  if (me == 0) {
    auto& s = checkpoint.training;
    s.step = step_;
    s.position = position_;
    s.samples = samples_;
    std::vector<std::vector<at::Tensor>> optimizer;
    for (int stage = 0; stage < g.topology.stages; ++stage) {
      const auto range = options_.partition.stages.at(stage);
      for (size_t b = range.first; b < range.end; ++b) {
        const auto block = parts_.net.blockRange(b, b + 1);
        const auto message =
            stage == kept ? blockMessage(b) : recvTensorList(g.world, g.topology.rankOf(stage, 0), checkpointTag(b));
        appendBlock(message, block->parameters().size(), block->buffers().size(), b, s, optimizer);
      }
    }
    s.optimizer = trainer::parameterStatesToBytes(optimizer);
  }
  for (auto& w : sends) w.wait();
  return checkpoint;
}

void PipelineTrainer::restoreCheckpoint(const trainer::EngineCheckpoint& checkpoint, bool sameWorld) {
  const auto& s = checkpoint.training;
  const auto optimizer = trainer::parameterStatesFromBytes(s.optimizer);
  if (optimizer.size() != s.parameters.size())
    throw RuntimeFailure(fmt::format("pipeline checkpoint: {} optimiser states for {} parameters", optimizer.size(),
                                     s.parameters.size()));
  std::unordered_set<const void*> mine;
  for (const auto& t : params_) mine.insert(t.unsafeGetTensorImpl());
  for (const auto& t : buffers_) mine.insert(t.unsafeGetTensorImpl());
  auto take = [&](at::Tensor& t, const at::Tensor& stored, const char* what, size_t index) {
    if (!mine.count(t.unsafeGetTensorImpl())) return false;
    if (!t.sizes().equals(stored.sizes()))
      throw RuntimeFailure(fmt::format("pipeline checkpoint: {} {} has shape {}, the model's is {}", what, index,
                                       fmt::join(stored.sizes(), "x"), fmt::join(t.sizes(), "x")));
    t.copy_(stored);
    return true;
  };
  at::NoGradGuard noGrad;
  size_t p = 0, b = 0;
  for (size_t block = 0; block < blocks_.size(); ++block) {
    const auto range = parts_.net.blockRange(block, block + 1);
    for (auto t : range->parameters()) {
      if (p >= s.parameters.size()) throw RuntimeFailure("pipeline checkpoint: fewer parameters than the model's");
      if (take(t, s.parameters[p], "parameter", p)) trainer::setParameterState(*optimizer_, t, optimizer[p]);
      ++p;
    }
    for (auto t : range->buffers()) {
      if (b >= s.buffers.size()) throw RuntimeFailure("pipeline checkpoint: fewer buffers than the model's");
      take(t, s.buffers[b], "buffer", b);
      ++b;
    }
  }
  if (p != s.parameters.size() || b != s.buffers.size())
    throw RuntimeFailure(fmt::format("pipeline checkpoint: {} parameters and {} buffers, the model has {} and {}",
                                     s.parameters.size(), s.buffers.size(), p, b));
  trainer::applyRandomState(s.rng);
  step_ = s.step;
  position_ = s.position;
  samples_ = s.samples;
  if (sameWorld && parts_.allocator) parts_.allocator->loadState(checkpoint.allocator);
}

}  // namespace balancenet::pipeline
