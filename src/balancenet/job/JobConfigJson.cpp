// The job as JSON: every options struct by the field list it declares beside its fields (core/FieldList.h), so a
// field added anywhere in JobConfig travels to the workers without a line here; the enums by their flags' words.
#include "balancenet/job/JobConfigJson.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "balancenet/compression/GradCompression.h"
#include "balancenet/core/Error.h"
#include "balancenet/core/FieldList.h"
#include "balancenet/precision/Precision.h"

// nlohmann/json converts a type by its adl_serializer, or else by to_json and from_json found by argument-dependent
// lookup: the enums' pairs sit in their namespaces below.
namespace nlohmann {
// Every struct with a field list, field by field under the members' names; every listed field must be there.
template <typename T>
struct adl_serializer<T, std::enable_if_t<balancenet::hasFieldList<T>>> {
  static void to_json(json& j, const T& o) {
    j = json::object();
    balancenet::forEachField(o, [&](const std::string& name, const auto& field) { j[name] = field; });
  }
  static void from_json(const json& j, T& o) {
    balancenet::forEachField(o, [&](const std::string& name, auto& field) { j.at(name).get_to(field); });
  }
};
// An optional value as null or the value (JSON's own form of "not set"; this nlohmann has none for std::optional).
template <typename T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& o) { j = o ? json(*o) : json(nullptr); }
  static void from_json(const json& j, std::optional<T>& o) {
    if (j.is_null())
      o.reset();
    else
      o = j.get<T>();
  }
};
template <>
struct adl_serializer<std::chrono::milliseconds> {
  static void to_json(json& j, const std::chrono::milliseconds& d) { j = d.count(); }
  static void from_json(const json& j, std::chrono::milliseconds& d) {
    d = std::chrono::milliseconds(j.get<int64_t>());
  }
};
}  // namespace nlohmann

namespace balancenet::objective {
NLOHMANN_JSON_SERIALIZE_ENUM(LossKind,
                             {{LossKind::Auto, "auto"}, {LossKind::CrossEntropy, "ce"}, {LossKind::Mse, "mse"}})
}  // namespace balancenet::objective

namespace balancenet::adaptive {
NLOHMANN_JSON_SERIALIZE_ENUM(BatchSizing::Mode, {{BatchSizing::Mode::Fixed, "fixed"},
                                                 {BatchSizing::Mode::Auto, "auto"},
                                                 {BatchSizing::Mode::Schedule, "schedule"}})
}  // namespace balancenet::adaptive

namespace balancenet::emulation {
void to_json(nlohmann::json& j, const FactorSchedule& s) { j = {{"base", s.base()}, {"changes", s.changes()}}; }
void from_json(const nlohmann::json& j, FactorSchedule& s) {
  s = FactorSchedule::of(j.at("base").get<std::vector<double>>(),
                         j.at("changes").get<std::map<int64_t, std::vector<double>>>());
}
}  // namespace balancenet::emulation

namespace balancenet::compression {
NLOHMANN_JSON_SERIALIZE_ENUM(GradCompression, {{GradCompression::None, "none"},
                                               {GradCompression::Bf16, "bf16"},
                                               {GradCompression::Fp16, "fp16"},
                                               {GradCompression::PowerSgd, "powersgd"},
                                               {GradCompression::Int8, "int8"}})
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
}  // namespace balancenet::trainer

namespace balancenet::job {

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

nlohmann::json toJson(const JobConfig& c) {
  nlohmann::json j = c;
  j["format"] = kFormat;
  return j;
}

JobConfig fromJson(const nlohmann::json& j) {
  if (j.at("format").get<int>() != kFormat) throw std::runtime_error("another format");
  return j.get<JobConfig>();
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
