#include "balancenet/session/LoopCheckpoint.h"

#include <nlohmann/json.hpp>

#include "balancenet/core/Error.h"

namespace balancenet::session {

std::string encodeLoopCheckpoint(const LoopCheckpoint& point) {
  const nlohmann::json j{{"format", "balancenet-loop-1"},
                         {"step", point.step},
                         {"batch", point.batch},
                         {"global_batch", point.globalBatch},
                         {"dataset_size", point.datasetSize},
                         {"seed", point.seed},
                         {"world_size", point.worldSize},
                         {"allocator", point.allocator}};
  return j.dump();
}

LoopCheckpoint decodeLoopCheckpoint(const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.value("format", "") != "balancenet-loop-1")
    throw UsageError("the checkpoint's balancenet state is not one this version wrote (format balancenet-loop-1)");
  try {
    LoopCheckpoint point;
    point.step = j.at("step").get<int64_t>();
    point.batch = j.at("batch").get<int64_t>();
    point.globalBatch = j.at("global_batch").get<int64_t>();
    point.datasetSize = j.at("dataset_size").get<int64_t>();
    point.seed = j.at("seed").get<uint64_t>();
    point.worldSize = j.at("world_size").get<int>();
    point.allocator = j.at("allocator").get<std::string>();
    return point;
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(std::string("the checkpoint's balancenet state is incomplete: ") + e.what());
  }
}

}  // namespace balancenet::session
