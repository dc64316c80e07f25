// Checkpoint bytes: fixed preamble, JSON header, sections; zlib's CRC32 over header and payload.
#include "balancenet/checkpoint/CheckpointFile.h"

#include <zlib.h>

#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace balancenet::checkpoint {
namespace {

constexpr char kMagic[8] = {'B', 'N', 'C', 'K', 'P', 'T', '\n', '\0'};
constexpr size_t kPreamble = 32;

uint32_t crc32Of(const char* data, size_t size) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths: feed big payloads in pieces.
  while (size > 0) {
    const uInt piece = static_cast<uInt>(std::min<size_t>(size, 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data), piece);
    data += piece;
    size -= piece;
  }
  return static_cast<uint32_t>(crc);
}

template <typename T>
void put(std::string& out, size_t offset, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) out[offset + i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

template <typename T>
T get(const std::string& in, size_t offset) {
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) value |= static_cast<T>(static_cast<unsigned char>(in[offset + i])) << (8 * i);
  return value;
}

}  // namespace

std::string encode(const Checkpoint& c) {
  std::vector<std::pair<std::string, const std::string*>> sections{{"training", &c.training},
                                                                   {"allocator", &c.allocator}};
  for (size_t r = 0; r < c.rng.size(); ++r) sections.push_back({fmt::format("rng/{}", r), &c.rng[r]});
  for (size_t r = 0; r < c.gpuRng.size(); ++r) sections.push_back({fmt::format("gpu_rng/{}", r), &c.gpuRng[r]});
  for (size_t r = 0; r < c.syncState.size(); ++r) sections.push_back({fmt::format("sync/{}", r), &c.syncState[r]});
  nlohmann::json header{{"model", c.run.signature.model},
                        {"tensors", c.run.signature.tensors},
                        {"optimizer", c.run.optimizer},
                        {"world_size", c.run.worldSize},
                        {"global_batch", c.run.globalBatch},
                        {"seed", c.run.seed},
                        {"engine", c.run.engine},
                        {"step", c.step}};
  size_t payload = 0;
  for (const auto& [name, bytes] : sections) {
    header["sections"].push_back({{"name", name}, {"bytes", bytes->size()}});
    payload += bytes->size();
  }
  const std::string headerText = header.dump();
  std::string out(kPreamble, '\0');
  std::memcpy(out.data(), kMagic, sizeof kMagic);
  out.reserve(kPreamble + headerText.size() + payload);
  out += headerText;
  for (const auto& section : sections) out += *section.second;
  put<uint32_t>(out, 8, kFormatVersion);
  put<uint32_t>(out, 12, static_cast<uint32_t>(headerText.size()));
  put<uint32_t>(out, 16, crc32Of(headerText.data(), headerText.size()));
  put<uint64_t>(out, 20, payload);
  put<uint32_t>(out, 28, crc32Of(out.data() + kPreamble + headerText.size(), payload));
  return out;
}

Checkpoint decode(const std::string& bytes) {
  auto fail = [](const std::string& why) { throw CorruptCheckpoint(why); };
  if (bytes.size() < kPreamble)
    fail(fmt::format("truncated: {} bytes, shorter than the {}-byte preamble", bytes.size(), kPreamble));
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) fail("not a balancenet checkpoint (wrong magic)");
  const auto version = get<uint32_t>(bytes, 8);
  if (version != kFormatVersion)
    fail(fmt::format("format version {}, this balancenet reads {}", version, kFormatVersion));
  const uint64_t headerSize = get<uint32_t>(bytes, 12);
  const uint64_t payloadSize = get<uint64_t>(bytes, 20);
  if (headerSize > bytes.size() || payloadSize > bytes.size() || kPreamble + headerSize + payloadSize != bytes.size())
    fail(fmt::format("{} bytes, the preamble announces {}", bytes.size(), kPreamble + headerSize + payloadSize));
  if (crc32Of(bytes.data() + kPreamble, headerSize) != get<uint32_t>(bytes, 16)) fail("header checksum mismatch");
  if (crc32Of(bytes.data() + kPreamble + headerSize, payloadSize) != get<uint32_t>(bytes, 28))
    fail("payload checksum mismatch");

  Checkpoint c;
  try {
    const auto header = nlohmann::json::parse(bytes.substr(kPreamble, headerSize));
    c.run.signature.model = header.at("model").get<std::string>();
    c.run.signature.tensors = header.at("tensors").get<std::vector<std::string>>();
    c.run.optimizer = header.at("optimizer").get<std::string>();
    c.run.worldSize = header.at("world_size").get<int>();
    c.run.globalBatch = header.at("global_batch").get<int64_t>();
    c.run.seed = header.at("seed").get<uint64_t>();
    c.run.engine = header.value("engine", std::string(kDataParallelEngine));
    c.step = header.at("step").get<int64_t>();
    size_t offset = kPreamble + headerSize;
    for (const auto& section : header.at("sections")) {
      const auto name = section.at("name").get<std::string>();
      const auto size = section.at("bytes").get<uint64_t>();
      if (size > bytes.size() - offset) fail(fmt::format("section {} runs past the end", name));
      std::string content = bytes.substr(offset, size);
      offset += size;
      if (name == "training")
        c.training = std::move(content);
      else if (name == "allocator")
        c.allocator = std::move(content);
      else if (name == fmt::format("rng/{}", c.rng.size()))
        c.rng.push_back(std::move(content));
      else if (name == fmt::format("gpu_rng/{}", c.gpuRng.size()))
        c.gpuRng.push_back(std::move(content));
      else if (name == fmt::format("sync/{}", c.syncState.size()))
        c.syncState.push_back(std::move(content));
      else
        fail(fmt::format("unknown section {}", name));
    }
    if (offset != bytes.size()) fail("sections do not fill the payload");
  } catch (const nlohmann::json::exception& e) {
    fail(fmt::format("unreadable header: {}", e.what()));
  }
  if (c.training.empty()) fail("no training state");
  return c;
}

}  // namespace balancenet::checkpoint
