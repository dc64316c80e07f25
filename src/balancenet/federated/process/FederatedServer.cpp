// The federated server: the global model, the clients' state, and what each round ends with. The rounds themselves
// are a RoundDriver's (synchronous, or fedbuff's buffered ones), the tasks' way out and back TaskExchange's.
//
// A synchronous round: configure (the strategy picks clients and their local work from what the server knows:
// who is alive and idle, each one's measured speed) -> send every task with the global weights -> poll the
// pending receives until each has answered or died (a task with a deadline: the client stops there and
// reports; silent for --peer-timeout beyond it, it counts as dead) -> the strategy keeps the updates it
// accepts and aggregates them -> the record; every --eval-every rounds the new model is evaluated on the test
// set on a thread of its own while the next rounds train (a round due while it still runs is not evaluated).
#include "balancenet/federated/process/FederatedServer.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "balancenet/checkpoint/CheckpointStore.h"
#include "balancenet/checkpoint/Resume.h"
#include "balancenet/core/Error.h"
#include "balancenet/core/Stopwatch.h"
#include "balancenet/data/OpenDataset.h"
#include "balancenet/federated/RoundLog.h"
#include "balancenet/federated/RoundTimeout.h"
#include "balancenet/federated/StrategyRegistry.h"
#include "balancenet/federated/process/FederatedClient.h"
#include "balancenet/federated/process/LaunchedRoster.h"
#include "balancenet/federated/process/ModelWeights.h"
#include "balancenet/federated/process/RoundDriver.h"
#include "balancenet/federated/process/ServerCheckpoint.h"
#include "balancenet/federated/process/TaskExchange.h"
#include "balancenet/federated/serveropt/ServerOptimizer.h"
#include "balancenet/metrics/ProgressLine.h"
#include "balancenet/models/ModelForData.h"
#include "balancenet/models/StateDictExport.h"
#include "balancenet/trainer/Evaluator.h"
#include "balancenet/trainer/RunOutputs.h"

namespace balancenet::federated {
namespace {

using Clock = std::chrono::steady_clock;

class Server : public RoundServer {
 public:
  Server(const ProcessSettings& s, ClientRoster& roster)
      : s_(s), o_(s.options), roster_(roster), strategy_(makeStrategy(strategyOptions(s.options))) {}

  int run() {
    setUp();
    connectClients();
    trainStart_ = Clock::now();
    lastProgress_ = trainStart_;
    const auto driver = strategy_->asynchronous() ? bufferedRounds(strategy_->bufferSize(), o_.maxUpdateNorm)
                                                  : synchronousRounds(o_.maxUpdateNorm);
    driver->run(*this);
    finish();
    return 0;
  }

 private:
  // The model (from the seed), the test set and, with --resume, the saved state.
  void setUp() {
    const data::DatasetPair sets = data::openDataset(s_.data);
    train_ = sets.train;
    models::ModelOptions modelOptions = s_.model;
    models::fitModelToData(modelOptions, sets.train->spec());
    at::manual_seed(o_.seed);
    auto built = models::buildModel(modelOptions);
    net_ = built.net;
    evalNet_ = models::buildModel(modelOptions).net;
    global_ = flatWeights(*net_);
    exchange_.emplace(global_.numel() * static_cast<int64_t>(sizeof(float)) + kHeaderSlots * 8, s_.peerTimeout);
    test_ = sets.test;
    objective_.emplace(sets.train->spec(), s_.objective);
    if (roster_.fixedClients() > 0)
      spdlog::info("federated: {} with {} clients, model {} ({} parameters), {} rounds, alpha {}", strategy_->name(),
                   o_.clients, s_.model.name, built.info.parameters, o_.rounds,
                   o_.alpha == kIid ? std::string("iid") : fmt::format("{}", o_.alpha));
    else
      spdlog::info("federated: {} with enrolled clients, model {} ({} parameters), {} rounds", strategy_->name(),
                   s_.model.name, built.info.parameters, o_.rounds);
    if (!s_.checkpoint.dir.empty()) {
      checkpoints_ = std::make_unique<checkpoint::CheckpointStore>(s_.checkpoint.dir, s_.checkpoint.keep);
      if (s_.checkpoint.resume) resumeFromCheckpoint();
    }
  }

  void resumeFromCheckpoint() {
    const auto stored = checkpoint::findResumable(*checkpoints_, federatedIdentity(o_, s_.model.name, *net_), o_.rounds,
                                                  [](const std::string& m) { spdlog::debug("{}", m); });
    ServerState state = decodeServerState(stored.checkpoint.training);
    const bool fixed = roster_.fixedClients() > 0;
    if (state.global.numel() != global_.numel() ||
        (fixed && static_cast<int>(state.samplesPerSecond.size()) != roster_.fixedClients()))
      throw UsageError(fmt::format("{} is not a checkpoint of this run (model or clients differ)", stored.path));
    round_ = state.round;
    version_ = state.version;
    global_ = state.global;
    savedSpeeds_ = state.samplesPerSecond;  // each client's, applied when it arrives
    savedNames_ = state.clientNames;
    if (!fixed) roster_.restore(savedNames_);  // a returning name gets its id, and so its estimate, back
    records_ = std::move(state.records);
    optimizer_ = state.optimizer;
    wallBefore_ = state.wallSeconds;
    lastCheckpoint_ = round_;
    tasksLostOnResume_ = state.tasksLostOnResume + state.tasksInFlight;
    spdlog::info("resumed from {}: round {}, model version {}, {:.1f} s trained", stored.path, round_, version_,
                 wallBefore_);
    // The clients' work on them is not in the checkpoint (it was under way); their clients get new tasks.
    if (state.tasksInFlight > 0)
      spdlog::warn(
          "{} tasks were out at clients when that checkpoint was written; their work is lost and they "
          "are counted in summary.json's tasks_lost_on_resume",
          state.tasksInFlight);
  }

  // The first clients, from the roster (launched: all of them; enrolled: --min-clients).
  void connectClients() {
    for (auto& a : roster_.first({*train_, *net_, s_.model.name, Clock::now() + s_.joinTimeout})) admit(std::move(a));
    train_.reset();  // only the launched roster's shards needed it
  }

  // The clients that joined or rejoined since the last round boundary take part from this one on.
  void admitRejoined() override {
    for (auto& a : roster_.arrivals(exchange_->connected())) admit(std::move(a));
  }

  // A client's state by id: a new one grows the lists; one known before keeps its speed estimate.
  void admit(Arrival a) {
    const auto c = static_cast<size_t>(a.client);
    const bool known = c < states_.size() && everConnected_.count(a.client);
    if (c >= states_.size()) {
      states_.resize(c + 1);
      names_.resize(c + 1);
    }
    states_[c].client = a.client;
    if (a.shardSamples >= 0) states_[c].shardSamples = a.shardSamples;
    if (!known && c < savedSpeeds_.size()) states_[c].samplesPerSecond = savedSpeeds_[c];
    names_[c] = a.name;
    const int64_t generation = a.channel->generation();
    exchange_->attach(a.client, std::move(a.channel));
    everConnected_.insert(a.client);
    if (known)
      spdlog::info("client {}{} rejoined (generation {}); it takes part from round {} on", a.client,
                   a.name.empty() ? "" : fmt::format(" ({})", a.name), generation, round_);
  }

  // RoundServer: what the round drivers ask of the server (RoundDriver.h).
  int64_t round() const override { return round_; }
  int64_t version() const override { return version_; }
  bool goesOn(int64_t done) const override { return done < o_.rounds && !outOfTime(); }
  int clients() const override { return static_cast<int>(states_.size()); }
  bool alive(int client) const override { return exchange_->alive(client); }
  bool anyAlive() const override { return exchange_->anyAlive(); }
  size_t tasksOut() const override { return exchange_->tasksOut(); }
  int64_t modelSize() const override { return global_.numel(); }
  void collect(std::vector<Returned>& returned, std::vector<ClientRoundRecord>& lost) override {
    exchange_->collect(returned, lost);
  }

  // Waits (at most the join timeout) for a restarted client when every one is dead.
  void awaitSomeClient() override {
    const auto start = Clock::now();
    while (!anyAlive()) {
      if (Clock::now() - start > s_.joinTimeout)
        throw RuntimeFailure(fmt::format("every client is dead at round {} and none rejoined", round_));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      admitRejoined();
    }
  }

  RoundContext context() const {
    RoundContext ctx;
    ctx.round = strategy_->asynchronous() ? version_ : round_;
    ctx.clients = states_;
    for (size_t c = 0; c < states_.size(); ++c)
      ctx.clients[c].available = exchange_->alive(static_cast<int>(c)) && !exchange_->busy(static_cast<int>(c));
    return ctx;
  }

  double wall() const { return wallBefore_ + secondsSince(trainStart_); }
  bool outOfTime() const { return o_.timeBudgetS > 0 && wall() >= o_.timeBudgetS; }

  std::vector<ClientTask> sendTasks(int64_t round, RoundRecord& record) override {
    auto tasks = strategy_->configure(context());
    for (const auto& task : tasks) {
      dispatch(task, round);
      record.downloadBytes += exchange_->modelBytes();
    }
    return tasks;
  }

  // The task's header and its timing (the client's measured speed, else the slowest one's), out with the weights.
  void dispatch(const ClientTask& task, int64_t round) {
    MessageHeader h;
    h.kind = MessageKind::Task;
    h.round = round;
    h.version = version_;
    h.localSteps = task.localSteps;
    h.batch = task.batch > 0 ? task.batch : o_.localBatch;
    h.deadlineS = deadlineWithinBudget(task.deadlineS, o_.timeBudgetS, wall());
    h.mu = task.mu;
    h.lr = o_.clientLr;
    h.evaluate = clientsEvaluate(o_, round, strategy_->asynchronous());
    h.momentum = o_.clientMomentum;
    const auto& state = states_[task.client];
    const TaskTiming timing{task.localSteps * h.batch, state.samplesPerSecond, slowestMeasured(),
                            exchange_->modelBytes(), h.deadlineS};
    exchange_->dispatch(task, h, global_, timing, state.shardSamples);
  }

  double slowestMeasured() const {
    double slowest = 0;
    for (const auto& st : states_)
      if (st.samplesPerSecond > 0 && (slowest == 0 || st.samplesPerSecond < slowest)) slowest = st.samplesPerSecond;
    return slowest;
  }

  // A running estimate: the clients' speed changes (emulated schedules, shared machines). Only from updates that
  // were not rejected: a client that sends garbage may report any speed too.
  void measureSpeed(const ClientUpdate& u) {
    if (u.samples <= 0 || u.computeSeconds <= 0) return;
    const double measured = static_cast<double>(u.samples) / u.computeSeconds;
    double& estimate = states_[u.client].samplesPerSecond;
    estimate = estimate > 0 ? 0.5 * (estimate + measured) : measured;
  }

  // Whether the update counts: not refused by UpdateCheck (`rejection`: why it is) and taken by the strategy
  // (a refused one is logged as late).
  bool accepted(Returned& r, int64_t round, const std::optional<std::string>& rejection) override {
    if (rejection) {
      r.record.status = "rejected";
      spdlog::warn("client {}'s update was rejected: {}; left out of round {}", r.update.client, *rejection, round);
      return false;
    }
    measureSpeed(r.update);
    if (strategy_->accepts(r.update)) return true;
    r.record.status = "late";
    spdlog::info("client {} missed the deadline ({} of {} local steps); left out of round {}", r.update.client,
                 r.update.doneSteps, r.update.assignedSteps, round);
    return false;
  }

  void aggregate(const std::vector<ClientUpdate>& updates) override {
    global_ = serverStep(o_, global_, strategy_->aggregate(global_, updates, version_), optimizer_);
    ++version_;
  }

  void endRound(RoundRecord record, int64_t roundsDone) override {
    round_ = roundsDone;
    record.wallSeconds = wall();
    records_.push_back(std::move(record));
    if (evaluationDone()) finishEvaluation();
    // The evaluation runs beside the training and must not hold it up: a round due while the previous
    // evaluation still runs is not evaluated (the next one due is).
    if (o_.evalEvery > 0 && round_ % o_.evalEvery == 0 && !evaluating_.valid()) startEvaluation();
    if (checkpoints_ && round_ % s_.checkpoint.every == 0) writeCheckpoint();
    for (const auto& c : records_.back().clients) samples_ += c.samples;
    const auto& evaluations = records_.back().clientEvaluations;
    if (!evaluations.empty()) lastClientAccuracy_ = summarizeClientEvaluations(round_, evaluations).accuracy;
    if (s_.progressSeconds > 0 && secondsSince(lastProgress_) >= s_.progressSeconds) {
      lastProgress_ = Clock::now();
      metrics::Progress p{round_, o_.rounds, wall(), samples_};
      p.budgetSeconds = o_.timeBudgetS;
      p.unit = "round";
      if (lastAccuracy_ >= 0) p.testAccuracy = lastAccuracy_;
      p.clientAccuracy = lastClientAccuracy_;
      spdlog::info(metrics::formatProgress(p));
    }
  }

  // The model after the round just recorded, evaluated while the next one trains.
  void startEvaluation() {
    finishEvaluation();
    evaluating_ = std::async(std::launch::async, [this, weights = global_.clone()] {
      loadFlatWeights(*evalNet_, weights);
      return trainer::countTestSamples(*evalNet_, *test_, *objective_, 0, test_->size()).localPoint(0);
    });
    evaluatedRecord_ = records_.size() - 1;
  }

  bool evaluationDone() const {
    return evaluating_.valid() && evaluating_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }

  void finishEvaluation() {
    if (!evaluating_.valid()) return;
    const metrics::EvalPoint e = evaluating_.get();
    records_[evaluatedRecord_].testAccuracy = e.accuracy;
    records_[evaluatedRecord_].testLoss = e.loss;
    lastAccuracy_ = e.accuracy;
  }

  // The run's settings for summary.json, with the tasks that resumes lost.
  std::string settingsWithLosses() const {
    auto j = nlohmann::json::parse(s_.settingsJson);
    j["tasks_lost_on_resume"] = tasksLostOnResume_;
    return j.dump();
  }

  void writeCheckpoint() {
    finishEvaluation();
    ServerState state;
    state.round = round_;
    state.version = version_;
    state.global = global_;
    // A client of the resumed checkpoint that has not come back since keeps the estimate and name it had there.
    for (size_t c = 0; c < std::max(states_.size(), savedSpeeds_.size()); ++c) {
      const bool back = everConnected_.count(static_cast<int>(c)) > 0;
      state.samplesPerSecond.push_back(back ? states_[c].samplesPerSecond
                                            : (c < savedSpeeds_.size() ? savedSpeeds_[c] : 0.0));
      state.clientNames.push_back(back ? names_[c] : (c < savedNames_.size() ? savedNames_[c] : ""));
    }
    state.records = records_;
    state.optimizer = optimizer_;
    state.wallSeconds = wall();
    state.tasksInFlight = static_cast<int64_t>(exchange_->tasksOut());
    state.tasksLostOnResume = tasksLostOnResume_;
    checkpoint::Checkpoint c;
    c.run = federatedIdentity(o_, s_.model.name, *net_);
    c.step = round_;
    c.training = encodeServerState(state);
    checkpoints_->write(c);
    lastCheckpoint_ = round_;
  }

  void finish() {
    exchange_->stopClients(s_.joinTimeout);  // the last answers (fedbuff's clients are busy), then a stop to each
    roster_.close();
    finishEvaluation();
    if (!records_.empty() && !records_.back().testAccuracy) {  // the final model is always evaluated
      startEvaluation();
      finishEvaluation();
    }
    if (checkpoints_ && lastCheckpoint_ != round_) writeCheckpoint();
    trainer::writeRunFile(s_.runDir, "rounds.csv", roundsCsv(records_));
    if (o_.clientEvalFraction > 0) trainer::writeRunFile(s_.runDir, "client_eval.csv", clientEvalCsv(records_));
    const auto summary = summarise(strategy_->name(), static_cast<int>(states_.size()), records_);
    trainer::writeRunFile(s_.runDir, "summary.json", summaryJson(summary, settingsWithLosses()));
    if (!s_.saveParams.empty()) {
      loadFlatWeights(*net_, global_);
      std::vector<at::Tensor> params;
      for (const auto& p : net_->parameters()) params.push_back(p.detach().clone());
      models::saveParameters(params, s_.saveParams);
    }
    const std::string clients = summary.federatedEvaluation ? ", " + describe(*summary.federatedEvaluation) : "";
    spdlog::info("federated: {} rounds, final test accuracy {:.2f}%{}, {:.1f} s of training; results in {}", round_,
                 100 * summary.finalAccuracy, clients, summary.wallSeconds, s_.runDir);
  }

  const ProcessSettings& s_;
  const FederatedOptions& o_;
  ClientRoster& roster_;
  std::unique_ptr<Strategy> strategy_;
  std::shared_ptr<const data::Dataset> train_;  // until the first clients arrived
  std::shared_ptr<models::Network> net_, evalNet_;
  at::Tensor global_;
  std::shared_ptr<const data::Dataset> test_;
  std::optional<objective::Objective> objective_;
  std::vector<ClientState> states_;
  std::optional<TaskExchange> exchange_;  // the clients' channels and the tasks out at them (from setUp on)
  std::vector<std::string> names_;        // enrolled clients' --name ("" for a launched one)
  std::set<int> everConnected_;
  std::vector<double> savedSpeeds_;      // --resume: the checkpoint's speed estimates, by client id
  std::vector<std::string> savedNames_;  // --resume: the checkpoint's client names, by client id
  std::vector<RoundRecord> records_;
  ServerOptState optimizer_;  // --server-opt's m and v
  int64_t round_ = 0, version_ = 0, lastCheckpoint_ = -1;
  std::unique_ptr<checkpoint::CheckpointStore> checkpoints_;
  std::future<metrics::EvalPoint> evaluating_;
  size_t evaluatedRecord_ = 0;
  double lastAccuracy_ = -1;
  std::optional<double> lastClientAccuracy_;  // the clients' held-out accuracy, weighted, of the last such round
  double wallBefore_ = 0;
  int64_t tasksLostOnResume_ = 0;  // tasks out at a checkpoint that a resume started from (fedbuff's in flight)
  Clock::time_point trainStart_, lastProgress_;
  int64_t samples_ = 0;  // trained by the clients in the rounds recorded, for the progress line
};

}  // namespace

int runFederatedServer(const ProcessSettings& settings, ClientRoster& roster) { return Server(settings, roster).run(); }

int runFederatedServer(const ProcessSettings& settings, const c10::intrusive_ptr<c10d::Store>& store) {
  LaunchedRoster roster(store, settings);
  return runFederatedServer(settings, roster);
}

}  // namespace balancenet::federated
