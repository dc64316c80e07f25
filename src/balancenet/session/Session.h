// Session: the engine behind a training loop that someone else drives (the Python package's bn.init()): the
// job's group, the split of every global batch (the orchestrator and its policy, as for `balancenet train`),
// this rank's share of each batch from the global permutation, the timings the loop reports, and the run's
// files (steps.csv, splits.csv, summary.json).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <c10/util/intrusive_ptr.h>

#include "balancenet/comm/Rendezvous.h"
#include "balancenet/comm/group/Communicator.h"
#include "balancenet/core/Stopwatch.h"
#include "balancenet/data/GlobalPermutationSampler.h"
#include "balancenet/elastic/GroupReform.h"
#include "balancenet/elastic/Heartbeat.h"
#include "balancenet/elastic/Membership.h"
#include "balancenet/job/JobConfig.h"
#include "balancenet/metrics/CpuThrottleSampler.h"
#include "balancenet/metrics/RunSummary.h"
#include "balancenet/metrics/StepRecord.h"
#include "balancenet/session/CompressedBuckets.h"
#include "balancenet/session/StepClock.h"

namespace c10d {
class ProcessGroup;
}
namespace balancenet::worker {
class GroupWiring;
}

namespace balancenet::session {

// One batch of a step, as this rank takes it.
struct BatchShare {
  int64_t step = 0;              // the optimiser step it belongs to
  int64_t batch = 0;             // its place in the stream of global batches (several per step with accumulation)
  std::vector<int64_t> indices;  // this rank's dataset indices
  double weight = 0;             // this rank's share of the global batch: its gradient's weight in the sum
};

// Where the members of a re-formed group go on from (elastic jobs).
struct Resume {
  int sourceRank = 0;  // the rank (in the new group) whose committed state everyone takes
  int64_t step = 0;    // its steps done
  int64_t batch = 0;   // its next global batch
  int worldSize = 0;
  std::string state;  // its committed state, as setCommittedState's function gave it (empty: none set)
};

// A restarted worker found the job finished before it was admitted: nothing left to do.
class JobFinishedBeforeJoin : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A step is what lies between two endStep() calls: one or more global batches (gradient accumulation), all
// under the split decided at its first batch, so a rank's gradient weight is the same for all of them.
class Session {
 public:
  // Joins the job described by `config` (config.worker set: the launcher's environment) or, without a worker
  // identity, forms a job of this process alone. A worker the launcher restarted (--elastic --max-restarts)
  // waits to be admitted into the running group and receives its state (joinState()); JobFinishedBeforeJoin
  // when the job ended first. Throws UsageError/RuntimeFailure with one line.
  explicit Session(job::JobConfig config);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  int rank() const { return comm_->rank(); }
  int worldSize() const { return comm_->size(); }
  const job::JobConfig& config() const { return config_; }
  // The group as torch.distributed sees it (Communicator::processGroup), for the Python package.
  c10::intrusive_ptr<c10d::ProcessGroup> processGroup() const;

  // The data the steps draw from: datasetSize samples, global batches of globalBatch, the permutation of
  // `seed`. Once per session. UsageError when the batch is larger than the data, smaller than the workers, or
  // not what --split sums to.
  void startData(int64_t datasetSize, int64_t globalBatch, uint64_t seed);
  bool dataStarted() const { return sampler_.has_value(); }
  int64_t globalBatch() const { return config_.trainer.globalBatch; }
  // Global batches per pass over the data (the last partial one is left to the next pass).
  int64_t batchesPerPass() const;

  // This rank's indices of global batch `batch` under the split in force now: what a loader reads ahead; the
  // split decided at a later step may differ (beginBatch says what is right). No collective.
  std::vector<int64_t> guessIndices(int64_t batch);
  // The next global batch of the stream; the first of a step decides its split (collective at the orchestrator's
  // decision steps: every rank calls it in the same order).
  BatchShare beginBatch();
  // Reading the batch took `ms`; `guessRight`: it had been read ahead under the right split.
  void batchLoaded(double ms, bool guessRight);
  // The last gradient bucket of a backward is ready: an emulated slower node (--slowdown, --node-speed) sleeps
  // here, before its sync, as StragglerSync does for the C++ trainer.
  void backwardDone();
  // A gradient all-reduce of the step completed (any thread).
  void reduced();
  // bn.attach(..., grad_compress=): the sums of the DDP hook's buckets in fewer bits, by the engine's compressed
  // exchanges over this group. `spec` as --grad-compress takes it ("int8", "powersgd:4"), its first `warmupSteps`
  // steps exact; `model`: every parameter. The session owns it. UsageError (one line) for a bad spec, a rank no
  // matrix of the model takes, or an --elastic job (a re-formed group would drop every residual).
  CompressedBuckets& compressGradients(const std::string& spec, int warmupSteps,
                                       const std::vector<comm::BufferPart>& model);
  // The step is done (after the optimiser): its record goes to the orchestrator, which may change the split of
  // the next step. `loss`: this rank's mean loss over its share; NaN: not given.
  void endStep(double loss);
  int64_t stepsDone() const { return step_; }
  const Split& split() const { return split_; }

  // Elastic jobs (--elastic): after a collective of this group failed (a peer died or stalled), re-forms the
  // group with the members still alive, by the same sequence as a train worker (elastic/GroupReform.h: a worker
  // left out of the new generation joins it again; a member dying while it forms makes the next one), and says
  // where they go on from: the newest committed step among them. Collective among the survivors. The caller then
  // takes the source rank's model and optimiser over the new group, and the steps after the resume point are taken
  // again. Throws RuntimeFailure when the job is not elastic or fewer than --min-workers remain.
  // `failure` empty: the re-form rank 0 planned at this boundary to admit joiners (reformDue()).
  Resume reform(const std::string& failure);
  bool elastic() const { return config_.resilience.elastic; }
  // Joiners were admitted for this boundary: every member calls reform("") after endStep().
  bool reformDue() const { return planDue_; }
  // The bytes of the state after the last completed step (the Python package's model and optimiser), asked of
  // the member with the newest one when a group forms anew; called without the Python GIL held.
  void setCommittedState(std::function<std::string()> state) { committedState_ = std::move(state); }
  // This worker joined a running job; the state it received, once.
  bool joined() const { return joined_; }
  std::string takeJoinState() { return std::move(joinState_); }
  int generation() const { return generation_.number; }
  int64_t nextBatch() const { return batch_; }

  // Where the loop stands after its last completed step, for a framework's checkpoint (session/LoopCheckpoint.h),
  // after startData(). Rank 0's is the one a framework saves.
  std::string loopCheckpoint() const;
  // Goes on from loopCheckpoint()'s text, on every rank, between steps: the steps done, the next global batch and,
  // in a world of the same size, the allocator's state. UsageError when it belongs to other data or batch.
  void restoreLoopCheckpoint(const std::string& text);

  // An evaluation the loop made (rank 0's is kept): shown in summary.json and the report.
  void recordEval(double accuracy, double loss);
  void setModelName(const std::string& name) { modelName_ = name; }

  // Collective: every rank's records to rank 0, which writes steps.csv, splits.csv and summary.json. Once;
  // later calls return the same summary.
  metrics::RunSummary finish();
  bool finished() const { return summary_.has_value(); }

  // At the interpreter's exit, with the GIL released (python/Module.cpp): stops the session's threads and drops
  // its process group, whose Gloo threads are joined here if nothing else holds it, not later during the
  // interpreter's teardown with the GIL held (where a Gloo thread freeing a tensor Python owns would wait for it
  // for ever). Nothing but closed() may be called after it.
  void close();
  bool closed() const { return closed_; }

 private:
  void printProgress(const metrics::StepRecord& last);
  void sumStepLosses();
  void joinRunningJob();
  // Takes the resume point the new group's source member sent: steps, next batch, state; the steps after it will be
  // taken again, so their records go.
  Resume adoptResumePoint(const std::string& bytes);
  void planJoins();

  job::JobConfig config_;
  comm::RendezvousOptions rv_;
  std::unique_ptr<comm::Communicator> comm_;
  // Membership (elastic jobs only): the job's store, this worker's member id (its launch rank), its beat.
  c10::intrusive_ptr<c10d::Store> jobStore_;
  int member_ = 0;
  std::unique_ptr<elastic::Membership> membership_;
  std::unique_ptr<elastic::Heartbeat> heartbeat_;
  std::unique_ptr<elastic::GroupReform> reform_;  // over membership_
  elastic::Generation generation_;
  int64_t committedBatch_ = 0;  // the next batch after the last completed step
  std::function<std::string()> committedState_;
  bool planDue_ = false;  // joiners admitted to the next generation, which forms at this boundary
  std::vector<int> plannedJoiners_;
  bool joined_ = false;
  std::string joinState_;
  // One per compressGradients() (a model attached): each lives as long as the session, so a hook never outlives it.
  std::vector<std::unique_ptr<CompressedBuckets>> compressed_;
  // The monitor and the allocator, as a train worker wires them (its GEMM prior measured first, at start).
  std::unique_ptr<worker::GroupWiring> wiring_;
  std::optional<data::GlobalPermutationSampler> sampler_;
  Split split_;
  StepClock clock_;
  // The step rows' throttled_periods and throttled_ms.
  metrics::CpuThrottleSampler throttle_;
  int64_t step_ = 0;           // steps done
  int64_t batch_ = 0;          // global batches begun
  int64_t stepShare_ = 0;      // this rank's samples in the step so far
  int64_t stepBatches_ = 0;    // global batches begun in the step (more than one with gradient accumulation)
  double pacedComputeMs_ = 0;  // compute already paced in this step (--slowdown)
  double trainMs_ = 0;         // the steps' own time, between their begin and end
  int64_t guessedBatches_ = 0, rightGuesses_ = 0;
  std::vector<metrics::StepRecord> records_;
  std::vector<metrics::EvalPoint> evals_;
  std::string modelName_ = "python";
  Stopwatch sinceProgress_;
  std::optional<metrics::RunSummary> summary_;
  bool closed_ = false;
};

}  // namespace balancenet::session
