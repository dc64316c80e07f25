// The enrolment records as JSON text in the store, and the server's admission check (see Enrolment.h).
#include "balancenet/federated/Enrolment.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "balancenet/core/Error.h"

namespace balancenet::federated {
namespace {

nlohmann::json parse(const std::string& text, const char* what) {
  try {
    return nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw RuntimeFailure(fmt::format("not a federated {} record: {}", what, firstLine(e.what())));
  }
}

// A missing or mistyped field is a RuntimeFailure naming the record, not nlohmann's exception.
template <typename F>
auto fields(const std::string& text, const char* what, F read) {
  const auto j = parse(text, what);
  try {
    return read(j);
  } catch (const std::exception& e) {
    throw RuntimeFailure(fmt::format("not a federated {} record: {}", what, firstLine(e.what())));
  }
}

}  // namespace

std::string encodeServedModel(const ServedModel& m) {
  return nlohmann::json{{"name", m.name},     {"width", m.width},     {"dropout", m.dropout},
                        {"layers", m.layers}, {"heads", m.heads},     {"embed", m.embed},
                        {"seed", m.seed},     {"classes", m.classes}, {"client_eval_fraction", m.clientEvalFraction}}
      .dump();
}

ServedModel decodeServedModel(const std::string& text) {
  return fields(text, "model", [](const nlohmann::json& j) {
    ServedModel m;
    m.name = j.at("name").get<std::string>();
    m.width = j.at("width").get<double>();
    m.dropout = j.at("dropout").get<double>();
    m.layers = j.at("layers").get<int64_t>();
    m.heads = j.at("heads").get<int64_t>();
    m.embed = j.at("embed").get<int64_t>();
    m.seed = j.at("seed").get<uint64_t>();
    m.classes = j.at("classes").get<int64_t>();
    m.clientEvalFraction = j.at("client_eval_fraction").get<double>();
    return m;
  });
}

std::string encodeEnrolment(const Enrolment& e) {
  return nlohmann::json{{"name", e.name},           {"samples", e.samples},     {"label_counts", e.labelCounts},
                        {"size", e.signature.size}, {"hash", e.signature.hash}, {"model", e.model}}
      .dump();
}

Enrolment decodeEnrolment(const std::string& text) {
  return fields(text, "enrolment", [](const nlohmann::json& j) {
    Enrolment e;
    e.name = j.at("name").get<std::string>();
    e.samples = j.at("samples").get<int64_t>();
    e.labelCounts = j.at("label_counts").get<std::vector<int64_t>>();
    e.signature = {j.at("size").get<int64_t>(), j.at("hash").get<uint64_t>()};
    e.model = j.at("model").get<std::string>();
    return e;
  });
}

std::string encodeReply(const EnrolmentReply& r) {
  return nlohmann::json{{"accepted", r.accepted}, {"client", r.client}, {"why", r.why}}.dump();
}

EnrolmentReply decodeReply(const std::string& text) {
  return fields(text, "enrolment reply", [](const nlohmann::json& j) {
    return EnrolmentReply{j.at("accepted").get<bool>(), j.at("client").get<int>(), j.at("why").get<std::string>()};
  });
}

std::optional<std::string> enrolmentRefusal(const Enrolment& e, const std::string& serverModel,
                                            const ModelSignature& serverSignature) {
  if (!e.model.empty() && e.model != serverModel)
    return fmt::format("it asked for model {}, but the server trains {}", e.model, serverModel);
  if (!(e.signature == serverSignature))
    return fmt::format(
        "its data makes a different {} ({} parameters, signature {:016x}) than the server's ({} parameters, "
        "signature {:016x}): other classes or another input shape",
        serverModel, e.signature.size, e.signature.hash, serverSignature.size, serverSignature.hash);
  if (e.samples < 1) return std::string("its training split holds no samples");
  return std::nullopt;
}

uint64_t fnv1a(const std::string& text, uint64_t hash) {
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace balancenet::federated
