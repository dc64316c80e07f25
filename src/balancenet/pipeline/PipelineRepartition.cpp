// Moving stage boundaries between steps (PipelineTrainer::repartition) and asking the controller whether to
// (options.livePartition). Exactness: the replicas of a stage hold the same parameters and optimiser state
// after every update, so a block that changes stage arrives with exactly the values, buffers and state it
// had, and the next step computes what it would have computed had the block stayed.
#include <ATen/ATen.h>
#include <fmt/format.h>

#include <optional>
#include <unordered_set>

#include "balancenet/core/Error.h"
#include "balancenet/pipeline/BlockMessage.h"
#include "balancenet/pipeline/PipelineTrainer.h"
#include "balancenet/pipeline/TensorListMessage.h"
#include "balancenet/trainer/OptimizerFactory.h"
#include "balancenet/trainer/OptimizerState.h"

namespace balancenet::pipeline {
namespace {

// Re-partition messages: above training tags (< 2^27), below evaluation (2^28) and gathering (2^29). Each
// (block, replica) pair has its own span of tags, so no two messages of one move share a tag.
constexpr int kMoveTagBase = 1 << 27;
constexpr int kMoveTagsPerBlock = 1 << 10;

int stageRunning(const Partition& partition, size_t block) {
  for (int s = 0; s < partition.stageCount(); ++s)
    if (block >= partition.stages[s].first && block < partition.stages[s].end) return s;
  throw InternalError(fmt::format("block {} is in no stage of the partition {}", block, partition.str()));
}

int moveTag(size_t block, int replica, int replicas) {
  const int64_t tag = kMoveTagBase + (static_cast<int64_t>(block) * replicas + replica) * kMoveTagsPerBlock;
  if (tag + kMoveTagsPerBlock > (1 << 28)) throw InternalError("too many blocks x replicas for the move tags");
  return static_cast<int>(tag);
}

struct BlockTensors {
  std::vector<at::Tensor> parameters;
  std::vector<at::Tensor> buffers;
};

BlockTensors tensorsOf(models::Network& net, size_t block) {
  const auto range = net.blockRange(block, block + 1);
  return {range->parameters(), range->buffers()};
}

using StateByParameter = std::unordered_map<const void*, std::vector<at::Tensor>>;

}  // namespace

// A block's message, in BlockMessage.h's layout.
std::vector<at::Tensor> PipelineTrainer::blockMessage(size_t block) {
  const auto mine = tensorsOf(parts_.net, block);
  std::vector<at::Tensor> message = mine.parameters;
  message.insert(message.end(), mine.buffers.begin(), mine.buffers.end());
  std::vector<at::Tensor> state;
  std::vector<int64_t> counts;
  for (const auto& p : mine.parameters) {
    const auto s = trainer::parameterState(*optimizer_, p);
    counts.push_back(static_cast<int64_t>(s.size()));
    state.insert(state.end(), s.begin(), s.end());
  }
  message.push_back(at::tensor(counts, at::kLong));
  message.insert(message.end(), state.begin(), state.end());
  if (messagesFor(message.size()) > kMoveTagsPerBlock)
    throw InternalError(fmt::format("block {} needs more messages than its span of move tags", block));
  return message;
}

void PipelineTrainer::receiveBlock(size_t block, int src, StateByParameter& state) {
  auto& g = parts_.groups;
  const auto mine = tensorsOf(parts_.net, block);
  const auto arrived = splitBlockMessage(recvTensorList(g.world, src, moveTag(block, g.replica(), g.topology.replicas)),
                                         mine.parameters.size(), mine.buffers.size(), block);
  const size_t p = mine.parameters.size(), tensors = p + mine.buffers.size();
  at::NoGradGuard noGrad;
  for (size_t i = 0; i < tensors; ++i) {
    at::Tensor t = i < p ? mine.parameters[i] : mine.buffers[i - p];
    const at::Tensor& value = i < p ? arrived.parameters[i] : arrived.buffers[i - p];
    const auto freed = freedShapes_.find(t.unsafeGetTensorImpl());
    if (freed == freedShapes_.end() || !value.sizes().equals(freed->second) || value.scalar_type() != t.scalar_type())
      throw InternalError(fmt::format("block {}'s tensor {} arrived at a rank that holds it, or unlike it", block, i));
    t.set_data(value);
    freedShapes_.erase(freed);
  }
  for (size_t i = 0; i < p; ++i) state[mine.parameters[i].unsafeGetTensorImpl()] = arrived.states[i];
}

// The protocol: for each block whose stage changes, replica j of its old stage sends it to replica j of its new
// stage. Every rank first posts all its sends (they never block), then receives what comes to it in block
// order (blocking), then waits for its sends: a receive can only wait for a send that is already posted, so
// no order of the ranks can deadlock.
void PipelineTrainer::repartition(const Partition& next) {
  auto& g = parts_.groups;
  try {
    Partition::parse(next.str(), blocks_.size(), g.topology.stages);
  } catch (const UsageError& e) {
    throw InternalError(std::string("a re-partition to an impossible partition: ") + e.what());
  }
  const Partition previous = options_.partition;
  const int mine = g.stageIndex(), j = g.replica();
  std::vector<comm::PendingWork> sends;
  std::vector<size_t> arriving;
  bool moved = false;
  for (size_t b = 0; b < blocks_.size(); ++b) {
    const int from = stageRunning(previous, b), to = stageRunning(next, b);
    if (from == to) continue;
    moved = true;
    if (from == mine) {
      auto works =
          sendTensorList(g.world, blockMessage(b), g.topology.rankOf(to, j), moveTag(b, j, g.topology.replicas));
      for (auto& w : works) sends.push_back(std::move(w));
    }
    if (to == mine) arriving.push_back(b);
  }
  if (!moved) return;
  StateByParameter arrivedState;
  for (size_t b : arriving) receiveBlock(b, g.topology.rankOf(stageRunning(previous, b), j), arrivedState);
  for (auto& w : sends) w.wait();
  options_.partition = next;
  ++repartitions_;
  const auto &before = previous.stages[mine], &after = next.stages[mine];
  if (before.first != after.first || before.end != after.end) rebuildStage(arrivedState);
}

void PipelineTrainer::rebuildStage(const StateByParameter& arrivedState) {
  auto& g = parts_.groups;
  const auto range = options_.partition.stages.at(g.stageIndex());
  auto stage = parts_.net.blockRange(range.first, range.end);
  stage->train(stage_->is_training());
  auto optimizer = trainer::makeOptimizer(options_.trainer.optimizer, stage->parameters(),
                                          optimizer_->param_groups().at(0).options().get_lr());
  for (const auto& p : stage->parameters()) {
    const auto arrived = arrivedState.find(p.unsafeGetTensorImpl());
    const bool kept = arrived == arrivedState.end();
    trainer::setParameterState(*optimizer, p, kept ? trainer::parameterState(*optimizer_, p) : arrived->second);
  }
  std::vector<at::Tensor> before = params_;
  before.insert(before.end(), buffers_.begin(), buffers_.end());
  runner_.reset();  // it refers to the old stage
  stage_ = stage;
  params_ = stage_->parameters();
  buffers_ = stage_->buffers();
  optimizer_ = std::move(optimizer);
  freeOtherStages(before);
  runner_ = std::make_unique<ScheduleRunner>(g, *stage_, options_.schedule, stageInputShape(), origin_);
}

void PipelineTrainer::consultController(const Split& split, double computeMs, double stepMs) {
  auto& g = parts_.groups;
  const int stages = g.topology.stages;
  unreported_.push_back(StepTimes{step_, split.batches, {computeMs}, stepMs});
  if (static_cast<int>(unreported_.size()) < options_.partitionEvery) return;
  // [step][rank]: a sum where each rank fills its own column.
  const int64_t steps = static_cast<int64_t>(unreported_.size()), world = g.world.size();
  auto byRank = at::zeros({steps, world}, at::kDouble);
  for (int64_t s = 0; s < steps; ++s) byRank[s][g.world.rank()] = unreported_[s].computeMsByRank.front();
  g.world.allreduceSum(byRank);
  // [moved?, first block of each stage..., one past the last block]
  std::vector<at::Tensor> answer{at::zeros({2 + stages}, at::kLong)};
  if (parts_.controller) {
    const double* all = byRank.data_ptr<double>();
    std::optional<Partition> next;
    for (int64_t s = 0; s < steps; ++s) {
      if (next) throw InternalError(fmt::format("the controller moved before the last of {} steps it saw", steps));
      auto& times = unreported_[s];
      times.computeMsByRank.assign(all + s * world, all + (s + 1) * world);
      next = parts_.controller->afterStep(times);
    }
    if (next) {
      if (next->stageCount() != stages)
        throw InternalError(fmt::format("the controller answered {} stages for {}", next->stageCount(), stages));
      auto* a = answer[0].data_ptr<int64_t>();
      a[0] = 1;
      for (int s = 0; s < stages; ++s) a[1 + s] = static_cast<int64_t>(next->stages[s].first);
      a[1 + stages] = static_cast<int64_t>(next->stages.back().end);
    }
  }
  unreported_.clear();
  g.world.broadcast(answer, 0);
  const auto* a = answer[0].data_ptr<int64_t>();
  if (a[0] == 0) return;
  Partition next;
  for (int s = 0; s < stages; ++s)
    next.stages.push_back({static_cast<size_t>(a[1 + s]), static_cast<size_t>(a[2 + s])});
  repartition(next);
}

}  // namespace balancenet::pipeline
