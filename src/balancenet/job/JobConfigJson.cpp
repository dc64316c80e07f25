// The job as JSON: each options struct's fields listed (nlohmann's NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE writes the pair
// of converters), beside an assertion of its field count, so that a field added anywhere in JobConfig fails the
// build here until it travels (or is said not to).
#include "balancenet/job/JobConfigJson.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "balancenet/compression/GradCompression.h"
#include "balancenet/core/Error.h"
#include "balancenet/job/AggregateFields.h"
#include "balancenet/precision/Precision.h"

// nlohmann/json finds to_json and from_json by argument-dependent lookup: each type's pair sits in its namespace.
namespace nlohmann {
template <>
struct adl_serializer<std::chrono::milliseconds> {
  static void to_json(json& j, const std::chrono::milliseconds& d) { j = d.count(); }
  static void from_json(const json& j, std::chrono::milliseconds& d) {
    d = std::chrono::milliseconds(j.get<int64_t>());
  }
};
}  // namespace nlohmann

namespace balancenet {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Split, batches)
static_assert(job::aggregateFields<Split>() == 1);
}  // namespace balancenet

namespace balancenet::models {
// Not carried: batchNorm and linear, the layer factories each worker sets for its comm mode (worker/WorkerSetup.h).
static_assert(job::aggregateFields<ModelOptions>() == 11);
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ModelOptions, name, inputShape, tokenInput, outputs, layers, heads, embed, width,
                                   dropout)
}  // namespace balancenet::models

namespace balancenet::data {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DataOptions, source, normalizeMean, normalizeStd, cacheDir, imageSize, augmentCrop,
                                   augmentFlip, cropPadding, valFraction, context, loaderThreads, regressionTargets)
static_assert(job::aggregateFields<DataOptions>() == 12);
}  // namespace balancenet::data

namespace balancenet::objective {
NLOHMANN_JSON_SERIALIZE_ENUM(LossKind,
                             {{LossKind::Auto, "auto"}, {LossKind::CrossEntropy, "ce"}, {LossKind::Mse, "mse"}})
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ObjectiveOptions, loss, labelSmoothing)
static_assert(job::aggregateFields<ObjectiveOptions>() == 2);
}  // namespace balancenet::objective

namespace balancenet::adaptive {
NLOHMANN_JSON_SERIALIZE_ENUM(BatchSizing::Mode, {{BatchSizing::Mode::Fixed, "fixed"},
                                                 {BatchSizing::Mode::Auto, "auto"},
                                                 {BatchSizing::Mode::Schedule, "schedule"}})
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(BatchSizing, mode, minBatch, maxBatch, startBatch, schedule, lrScaling)
static_assert(job::aggregateFields<BatchSizing>() == 6);
}  // namespace balancenet::adaptive

namespace balancenet::emulation {
void to_json(nlohmann::json& j, const FactorSchedule& s) { j = {{"base", s.base()}, {"changes", s.changes()}}; }
void from_json(const nlohmann::json& j, FactorSchedule& s) {
  s = FactorSchedule::of(j.at("base").get<std::vector<double>>(),
                         j.at("changes").get<std::map<int64_t, std::vector<double>>>());
}
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(EmulationOptions, slowdown, nodeSpeed, netDelayMs, netBandwidthMbps)
static_assert(job::aggregateFields<EmulationOptions>() == 4);
}  // namespace balancenet::emulation

namespace balancenet::compression {
NLOHMANN_JSON_SERIALIZE_ENUM(GradCompression, {{GradCompression::None, "none"},
                                               {GradCompression::Bf16, "bf16"},
                                               {GradCompression::Fp16, "fp16"},
                                               {GradCompression::PowerSgd, "powersgd"},
                                               {GradCompression::Int8, "int8"}})
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CompressionOptions, kind, rank, warmupSteps, errorFeedback)
static_assert(job::aggregateFields<CompressionOptions>() == 4);
}  // namespace balancenet::compression

namespace balancenet::comm {
NLOHMANN_JSON_SERIALIZE_ENUM(CommMode, {{CommMode::Auto, "auto"},
                                        {CommMode::AllReduce, "allreduce"},
                                        {CommMode::Flat, "flat"},
                                        {CommMode::HalvingDoubling, "hd"},
                                        {CommMode::AllToAll, "a2a"},
                                        {CommMode::SufficientFactors, "sfb"},
                                        {CommMode::Hybrid, "hybrid"},
                                        {CommMode::ParameterServers, "ps"}})
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CommOptions, mode, servers, staleness, bucketMb, overlap, offloadBelow, explain,
                                   compression, allowLossy)
static_assert(job::aggregateFields<CommOptions>() == 9);
}  // namespace balancenet::comm

namespace balancenet::precision {
NLOHMANN_JSON_SERIALIZE_ENUM(Precision,
                             {{Precision::Fp32, "fp32"}, {Precision::Bf16, "bf16"}, {Precision::Fp16, "fp16"}})
}  // namespace balancenet::precision

namespace balancenet::recompute {
NLOHMANN_JSON_SERIALIZE_ENUM(RecomputeMode, {{RecomputeMode::None, "none"},
                                             {RecomputeMode::Blocks, "blocks"},
                                             {RecomputeMode::Auto, "auto"}})
}  // namespace balancenet::recompute

namespace balancenet::trainer {
NLOHMANN_JSON_SERIALIZE_ENUM(LrSchedule::Decay, {{LrSchedule::Decay::Constant, "constant"},
                                                 {LrSchedule::Decay::Cosine, "cosine"},
                                                 {LrSchedule::Decay::Step, "step"}})
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LrSchedule, baseLr, warmupSteps, decay, totalSteps, minLr, stepEvery, gamma)
static_assert(job::aggregateFields<LrSchedule>() == 7);
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(OptimizerOptions, name, momentum, weightDecay, nesterov, beta1, beta2, eps)
static_assert(job::aggregateFields<OptimizerOptions>() == 7);
// Not carried: capacity, metricStyle, samplesPerPass, stateSlices and recomputeBlocks, which each worker measures
// and derives from its data and memory (worker/Worker.cpp).
static_assert(job::aggregateFields<TrainerOptions>() == 25);
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(TrainerOptions, steps, globalBatch, seed, lr, optimizer, clipGradNorm, accumulate,
                                   shardState, recompute, precision, evalEvery, evalAtEnd, evalSamples, stopAtAccuracy,
                                   timeBudgetS, progressSeconds, runDir, modelName, timelinePath, broadcastInitialModel)
}  // namespace balancenet::trainer

namespace balancenet::elastic {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ResilienceOptions, elastic, minNodes, maxNodes, peerTimeout, stallTimeout,
                                   maxRestarts, join)
static_assert(job::aggregateFields<ResilienceOptions>() == 7);
}  // namespace balancenet::elastic

namespace balancenet::device {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DeviceOptions, device, devices, backend)
static_assert(job::aggregateFields<DeviceOptions>() == 3);
}  // namespace balancenet::device

namespace balancenet::checkpoint {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CheckpointOptions, dir, every, keep, resume)
static_assert(job::aggregateFields<CheckpointOptions>() == 4);
}  // namespace balancenet::checkpoint

namespace balancenet::pipeline {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PipelineOptions, stages, microBatches, schedule, partition, explainPartition,
                                   keepPartition)
static_assert(job::aggregateFields<PipelineOptions>() == 6);
}  // namespace balancenet::pipeline

namespace balancenet::federated {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LocalSteps, low, high)
static_assert(job::aggregateFields<LocalSteps>() == 2);
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FederatedOptions, clients, rounds, timeBudgetS, strategy, alpha, localSteps,
                                   localBatch, fraction, deadlineS, mu, bufferSize, serverLr, clientLr, seed, evalEvery,
                                   clientEvalFraction, clientEvalEvery, serverOpt, serverMomentum, serverBeta2,
                                   serverTau, clientMomentum, trimBeta, maxUpdateNorm)
static_assert(job::aggregateFields<FederatedOptions>() == 24);
}  // namespace balancenet::federated

namespace balancenet::job {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SettingSource, setting, value, from)
static_assert(aggregateFields<SettingSource>() == 3);
// Not carried: jobToken, which a worker reads from BALANCENET_JOB_TOKEN (childEnvironment sets it): a secret is
// not copied into a second place.
static_assert(aggregateFields<LaunchOptions>() == 16);
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LaunchOptions, nnodes, nodeRank, nprocPerNode, hostWorkers, assumedWorldFlags,
                                   masterAddr, masterPort, rendezvousTimeout, iface, insecureOpen, tokenMadeUp,
                                   storeFile, force, scheduler, sources)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ProgramOptions, python, argv, executable)
static_assert(aggregateFields<ProgramOptions>() == 3);
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(OrchestrationOptions, policy, rebalanceEvery, bnoNormalize, probePeers,
                                   rebalanceBudget, batchSizing)
static_assert(aggregateFields<OrchestrationOptions>() == 6);

namespace {

constexpr int kFormat = 1;  // the document's layout; a launcher and its workers are the same build

// JSON has no infinity or NaN (nlohmann writes null): such a number (--alpha iid is infinity) travels as
// {"nonFinite": "inf" | "-inf" | "nan"}, an object no options struct has in place of a number.
constexpr const char* kNonFinite = "nonFinite";
void encodeNonFinite(nlohmann::json& j) {
  if (j.is_number_float() && !std::isfinite(j.get<double>())) {
    const double v = j.get<double>();
    j = {{kNonFinite, std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf")}};
  } else if (j.is_structured()) {
    for (auto& element : j) encodeNonFinite(element);
  }
}
void decodeNonFinite(nlohmann::json& j) {
  if (j.is_object() && j.size() == 1 && j.contains(kNonFinite)) {
    const auto text = j.at(kNonFinite).get<std::string>();
    j = text == "nan" ? std::numeric_limits<double>::quiet_NaN()
                      : (text == "-inf" ? -1 : 1) * std::numeric_limits<double>::infinity();
  } else if (j.is_structured()) {
    for (auto& element : j) decodeNonFinite(element);
  }
}

// Not carried: worker and server, who this process is, which each reads from its environment.
static_assert(aggregateFields<JobConfig>() == 26);
nlohmann::json toJson(const JobConfig& c) {
  nlohmann::json j = {{"format", kFormat},
                      {"launch", c.launch},
                      {"program", c.program},
                      {"model", c.model},
                      {"data", c.data},
                      {"objective", c.objective},
                      {"syncBatchNorm", c.syncBatchNorm},
                      {"split", c.split},
                      {"orchestration", c.orchestration},
                      {"emulation", c.emulation},
                      {"comm", c.comm},
                      {"resilience", c.resilience},
                      {"trainer", c.trainer},
                      {"device", c.device},
                      {"threads", c.threads},
                      {"threadsGiven", c.threadsGiven},
                      {"threadsFrom", c.threadsFrom},
                      {"logLevel", c.logLevel},
                      {"saveParams", c.saveParams},
                      {"exportPath", c.exportPath},
                      {"checkpoint", c.checkpoint},
                      {"pipeline", c.pipeline},
                      {"memoryLimitMb", c.memoryLimitMb},
                      {"argv", c.argv}};
  j["federated"] = c.federated ? nlohmann::json(*c.federated) : nlohmann::json(nullptr);
  return j;
}

JobConfig fromJson(const nlohmann::json& j) {
  if (j.at("format").get<int>() != kFormat) throw std::runtime_error("another format");
  JobConfig c;
  j.at("launch").get_to(c.launch);
  j.at("program").get_to(c.program);
  j.at("model").get_to(c.model);
  j.at("data").get_to(c.data);
  j.at("objective").get_to(c.objective);
  j.at("syncBatchNorm").get_to(c.syncBatchNorm);
  j.at("split").get_to(c.split);
  j.at("orchestration").get_to(c.orchestration);
  j.at("emulation").get_to(c.emulation);
  j.at("comm").get_to(c.comm);
  j.at("resilience").get_to(c.resilience);
  j.at("trainer").get_to(c.trainer);
  j.at("device").get_to(c.device);
  j.at("threads").get_to(c.threads);
  j.at("threadsGiven").get_to(c.threadsGiven);
  j.at("threadsFrom").get_to(c.threadsFrom);
  j.at("logLevel").get_to(c.logLevel);
  j.at("saveParams").get_to(c.saveParams);
  j.at("exportPath").get_to(c.exportPath);
  j.at("checkpoint").get_to(c.checkpoint);
  j.at("pipeline").get_to(c.pipeline);
  j.at("memoryLimitMb").get_to(c.memoryLimitMb);
  j.at("argv").get_to(c.argv);
  if (!j.at("federated").is_null()) c.federated = j.at("federated").get<federated::FederatedOptions>();
  return c;
}

}  // namespace

std::string jobConfigJson(const JobConfig& c) {
  auto j = toJson(c);
  encodeNonFinite(j);
  return j.dump();
}

JobConfig jobConfigFromJson(const std::string& text) {
  try {
    auto j = nlohmann::json::parse(text);
    decodeNonFinite(j);
    return fromJson(j);
  } catch (const std::exception& e) {
    throw UsageError(
        fmt::format("the job's configuration from the launcher is not one this balancenet wrote ({}); "
                    "start the workers with the same balancenet as their launcher",
                    firstLine(e.what())));
  }
}

}  // namespace balancenet::job
