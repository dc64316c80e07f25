// IdxFile: strict IDX reader and writer over zlib's gz* API, which reads plain and gzip files alike.
#include "balancenet/data/IdxFile.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "balancenet/core/Error.h"
#include "balancenet/data/BigEndian.h"

namespace balancenet::data {

namespace {

constexpr uint8_t kUbyteType = 0x08;
// Reject absurd headers before they turn into huge allocations: 2^40 bytes is far beyond any dataset.
constexpr int64_t kMaxPayload = int64_t{1} << 40;
// Never trust the header for the allocation size: grow the buffer as bytes actually arrive.
constexpr int64_t kChunk = int64_t{1} << 24;

struct GzCloser {
  void operator()(gzFile f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

std::string describe(int rank) {
  if (rank == 1) return "an MNIST label file";
  if (rank == 3) return "an MNIST image file";
  return fmt::format("a rank-{} unsigned-byte IDX file", rank);
}

std::string payloadNoun(int rank) {
  if (rank == 1) return "labels";
  if (rank == 3) return "pixels";
  return "data";
}

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw UsageError(path + ": " + what); }

// gzread takes an unsigned count; read in int-sized pieces. Returns bytes read; stops early at EOF.
int64_t readBytes(gzFile f, uint8_t* out, int64_t count, const std::string& path) {
  int64_t done = 0;
  while (done < count) {
    auto want = static_cast<unsigned>(std::min<int64_t>(count - done, std::numeric_limits<int>::max()));
    int got = gzread(f, out + done, want);
    if (got < 0) {
      int errnum = 0;
      const char* msg = gzerror(f, &errnum);
      fail(path, fmt::format("read error: {}", errnum == Z_ERRNO ? std::strerror(errno) : msg));
    }
    if (got == 0) break;
    done += got;
  }
  return done;
}

// zlib reports a gzip stream cut short as Z_BUF_ERROR after returning what it could decode.
std::string gzipProblem(gzFile f) {
  int errnum = Z_OK;
  const char* msg = gzerror(f, &errnum);
  if (errnum == Z_OK) return "";
  return fmt::format(" (gzip: {})", msg);
}

}  // namespace

IdxArray readIdx(const std::string& path, int expectedRank) {
  if (expectedRank < 1 || expectedRank > 255) fail(path, fmt::format("invalid expected rank {}", expectedRank));
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) fail(path, "no such file");
  if (!std::filesystem::is_regular_file(status)) fail(path, "not a regular file");

  GzFile file(gzopen(path.c_str(), "rb"));
  if (!file) fail(path, fmt::format("cannot open: {}", std::strerror(errno)));
  gzFile f = file.get();

  const auto expectedMagic = static_cast<uint32_t>(kUbyteType) << 8 | static_cast<uint32_t>(expectedRank);
  uint8_t magicBytes[4];
  int64_t got = readBytes(f, magicBytes, 4, path);
  if (got == 0) fail(path, fmt::format("empty file, expected {}", describe(expectedRank)));
  if (got < 4) fail(path, fmt::format("truncated: {} bytes, too short for an IDX header{}", got, gzipProblem(f)));
  const uint32_t magic = bigEndian32(magicBytes);
  const std::string magicText = fmt::format("0x{:08X}", magic);
  if (magicBytes[0] != 0 || magicBytes[1] != 0)
    fail(path, fmt::format("bad magic {}, expected 0x{:08X} ({}): not an IDX file", magicText, expectedMagic,
                           describe(expectedRank)));
  if (magicBytes[2] != kUbyteType)
    fail(path, fmt::format("bad magic {}: element type 0x{:02X} is not 0x08 (unsigned byte) as {} needs", magicText,
                           magicBytes[2], describe(expectedRank)));
  if (magicBytes[3] != expectedRank)
    fail(path, fmt::format("bad magic {}, expected 0x{:08X} ({}): it has {} dims, not {}", magicText, expectedMagic,
                           describe(expectedRank), magicBytes[3], expectedRank));

  IdxArray out;
  std::vector<uint8_t> dimBytes(4 * static_cast<size_t>(expectedRank));
  got = readBytes(f, dimBytes.data(), static_cast<int64_t>(dimBytes.size()), path);
  if (got < static_cast<int64_t>(dimBytes.size()))
    fail(path,
         fmt::format("truncated header: expected {} bytes of dims, found {}{}", dimBytes.size(), got, gzipProblem(f)));
  for (int d = 0; d < expectedRank; ++d) out.dims.push_back(bigEndian32(&dimBytes[4 * static_cast<size_t>(d)]));
  int64_t payload = 1;
  for (size_t d = 0; d < out.dims.size(); ++d) {
    const int64_t dim = out.dims[d];
    if (dim == 0) fail(path, fmt::format("dims {}: dim {} is zero", fmt::join(out.dims, "x"), d));
    // dim < 2^32 and payload <= 2^40 before the check, so the product cannot overflow int64.
    if (payload > kMaxPayload / dim)
      fail(path, fmt::format("dims {} describe an implausibly large array", fmt::join(out.dims, "x")));
    payload *= dim;
  }

  while (static_cast<int64_t>(out.data.size()) < payload) {
    const auto have = static_cast<int64_t>(out.data.size());
    const int64_t want = std::min(kChunk, payload - have);
    out.data.resize(static_cast<size_t>(have + want));
    const int64_t n = readBytes(f, out.data.data() + have, want, path);
    if (n < want) {
      fail(path, fmt::format("truncated: expected {} bytes of {}, found {}{}", payload, payloadNoun(expectedRank),
                             have + n, gzipProblem(f)));
    }
  }
  uint8_t extra[4096];
  int64_t trailing = 0;
  for (int64_t n; (n = readBytes(f, extra, sizeof extra, path)) > 0;) trailing += n;
  if (trailing > 0)
    fail(path, fmt::format("{} trailing byte{} after the {} bytes of {} (dims {})", trailing, trailing == 1 ? "" : "s",
                           payload, payloadNoun(expectedRank), fmt::join(out.dims, "x")));
  if (auto problem = gzipProblem(f); !problem.empty()) fail(path, "corrupt data" + problem);
  return out;
}

void writeIdx(const std::string& path, const IdxArray& array, bool gzip) {
  if (array.dims.empty() || array.dims.size() > 255)
    fail(path, fmt::format("cannot write an IDX array of rank {}", array.dims.size()));
  std::vector<uint8_t> header(4 + 4 * array.dims.size());
  header[2] = kUbyteType;
  header[3] = static_cast<uint8_t>(array.dims.size());
  int64_t payload = 1;
  for (size_t d = 0; d < array.dims.size(); ++d) {
    const int64_t dim = array.dims[d];
    if (dim <= 0 || dim > std::numeric_limits<uint32_t>::max())
      fail(path, fmt::format("cannot write dim {} = {}", d, dim));
    putBigEndian32(&header[4 + 4 * d], static_cast<uint32_t>(dim));
    payload *= dim;
  }
  if (payload != static_cast<int64_t>(array.data.size()))
    fail(path, fmt::format("dims {} need {} bytes but the array holds {}", fmt::join(array.dims, "x"), payload,
                           array.data.size()));

  // "T" makes zlib write the bytes as they are, so both variants share one code path.
  GzFile file(gzopen(path.c_str(), gzip ? "wb" : "wbT"));
  if (!file) fail(path, fmt::format("cannot create: {}", std::strerror(errno)));
  auto write = [&](const uint8_t* bytes, size_t count) {
    size_t done = 0;
    while (done < count) {
      auto want = static_cast<unsigned>(std::min<size_t>(count - done, std::numeric_limits<int>::max()));
      int put = gzwrite(file.get(), bytes + done, want);
      if (put <= 0) {
        int errnum = 0;
        const char* msg = gzerror(file.get(), &errnum);
        fail(path, fmt::format("write error: {}", errnum == Z_ERRNO ? std::strerror(errno) : msg));
      }
      done += static_cast<size_t>(put);
    }
  };
  write(header.data(), header.size());
  write(array.data.data(), array.data.size());
  if (gzclose(file.release()) != Z_OK) fail(path, "write error on close");
}

}  // namespace balancenet::data
