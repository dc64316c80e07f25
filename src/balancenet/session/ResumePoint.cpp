// Two 64-bit numbers in little-endian order, then the state's bytes as they are.
#include "balancenet/session/ResumePoint.h"

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::session {
namespace {

constexpr size_t kNumbers = 2 * sizeof(int64_t);

void put(std::string& out, int64_t value) {
  const auto bits = static_cast<uint64_t>(value);
  for (int byte = 0; byte < 8; ++byte) out.push_back(static_cast<char>((bits >> (8 * byte)) & 0xff));
}

int64_t get(const std::string& in, size_t at) {
  uint64_t bits = 0;
  for (int byte = 0; byte < 8; ++byte)
    bits |= static_cast<uint64_t>(static_cast<unsigned char>(in[at + byte])) << (8 * byte);
  return static_cast<int64_t>(bits);
}

}  // namespace

std::string encodeResumePoint(const ResumePoint& point) {
  std::string out;
  out.reserve(kNumbers + point.state.size());
  put(out, point.step);
  put(out, point.batch);
  out += point.state;
  return out;
}

ResumePoint decodeResumePoint(const std::string& bytes) {
  if (bytes.size() < kNumbers)
    throw RuntimeFailure(
        fmt::format("the re-formed group's resume point has {} bytes, fewer than {}", bytes.size(), kNumbers));
  ResumePoint point;
  point.step = get(bytes, 0);
  point.batch = get(bytes, 8);
  point.state = bytes.substr(kNumbers);
  return point;
}

}  // namespace balancenet::session
