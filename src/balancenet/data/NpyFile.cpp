// NpyFile: magic and version, then the header's Python dict literal read by a small recursive-descent parser.
#include "balancenet/data/NpyFile.h"

#include <cctype>
#include <cstring>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "balancenet/core/Error.h"

namespace balancenet::data {

namespace {

constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr size_t kMagicBytes = 6;
// Beyond any real array: keeps the size arithmetic far from int64 overflow.
constexpr int64_t kMaxBytes = int64_t{1} << 50;

// The header is a dict literal such as "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }".
class DictParser {
 public:
  DictParser(std::string text, const std::string& path) : text_(std::move(text)), path_(path) {}

  NpyHeader parse() {
    std::optional<std::string> descr;
    std::optional<bool> fortran;
    std::optional<std::vector<int64_t>> shape;
    expect('{');
    while (!peekIs('}')) {
      const std::string key = quoted();
      expect(':');
      if (key == "descr") {
        if (peekIs('[')) fail("a structured dtype (a list of fields); save a plain numeric array");
        descr = quoted();
      } else if (key == "fortran_order") {
        fortran = boolean();
      } else if (key == "shape") {
        shape = tuple();
      } else {
        fail(fmt::format("unexpected key '{}'", key));
      }
      if (!peekIs('}')) expect(',');
    }
    if (!descr || !fortran || !shape) fail("it lacks one of 'descr', 'fortran_order' and 'shape'");
    if (*fortran)
      throw UsageError(path_ + ": the array is in Fortran order; save it with np.save(path, np.ascontiguousarray(a))");
    NpyHeader h;
    h.shape = *shape;
    h.itemBytes = dtype(*descr, h.dtype);
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw UsageError(path_ + ": bad .npy header: " + what); }

  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool peekIs(char c) {
    skipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  void expect(char c) {
    if (!peekIs(c)) fail(fmt::format("expected '{}' at offset {}", c, pos_));
    ++pos_;
  }
  std::string quoted() {
    skipSpace();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      fail(fmt::format("expected a string at offset {}", pos_));
    const char q = text_[pos_++];
    const size_t end = text_.find(q, pos_);
    if (end == std::string::npos) fail("unterminated string");
    std::string s = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return s;
  }
  bool boolean() {
    skipSpace();
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}})
      if (text_.compare(pos_, std::strlen(word), word) == 0) {
        pos_ += std::strlen(word);
        return value;
      }
    fail(fmt::format("expected True or False at offset {}", pos_));
  }
  std::vector<int64_t> tuple() {
    std::vector<int64_t> dims;
    expect('(');
    while (!peekIs(')')) {
      if (!std::isdigit(static_cast<unsigned char>(text_[pos_]))) fail(fmt::format("bad dimension at offset {}", pos_));
      int64_t d = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        d = d * 10 + (text_[pos_++] - '0');
        if (d > kMaxBytes) fail("a dimension is implausibly large");
      }
      if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;  // Python 2's long literal
      dims.push_back(d);
      if (!peekIs(')')) expect(',');
    }
    ++pos_;
    return dims;
  }
  // "<f4" -> kind "f4", 4 bytes. Little-endian ('<'), native ('=', this is a little-endian build) or
  // byte-order-free ('|', one-byte types).
  int64_t dtype(const std::string& descr, std::string& kind) const {
    if (descr.size() < 3 || !std::strchr("<=|>", descr[0]) || !std::isalpha(static_cast<unsigned char>(descr[1])))
      fail(fmt::format("unsupported dtype '{}'", descr));
    kind = descr.substr(1);
    int64_t bytes = 0;
    for (size_t i = 2; i < descr.size(); ++i) {
      if (!std::isdigit(static_cast<unsigned char>(descr[i]))) fail(fmt::format("unsupported dtype '{}'", descr));
      bytes = bytes * 10 + (descr[i] - '0');
      if (bytes > 64) fail(fmt::format("unsupported dtype '{}'", descr));
    }
    if (descr[0] == '>' && bytes > 1)
      throw UsageError(
          fmt::format("{}: big-endian dtype '{}'; save it with a.astype(a.dtype.newbyteorder('<'))", path_, descr));
    if (bytes == 0) fail(fmt::format("unsupported dtype '{}'", descr));
    return bytes;
  }

  std::string text_;
  const std::string& path_;
  size_t pos_ = 0;
};

uint32_t littleEndian(const uint8_t* b, int count) {
  uint32_t v = 0;
  for (int i = count - 1; i >= 0; --i) v = v << 8 | b[i];
  return v;
}

}  // namespace

int64_t NpyHeader::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

NpyHeader parseNpyHeader(const uint8_t* bytes, size_t size, const std::string& path) {
  if (size < kMagicBytes || std::memcmp(bytes, kNpyMagic, kMagicBytes) != 0)
    throw UsageError(path + ": not a .npy file (bad magic; write it with numpy.save)");
  if (size < kMagicBytes + 2) throw UsageError(path + ": truncated .npy header");
  const int major = bytes[6], minor = bytes[7];
  if (major < 1 || major > 3 || minor != 0)
    throw UsageError(
        fmt::format("{}: .npy format version {}.{} is not supported (1.0, 2.0, 3.0 are)", path, major, minor));
  // 1.0 has a 2-byte header length, 2.0 and 3.0 (UTF-8 header) a 4-byte one.
  const int lengthBytes = major == 1 ? 2 : 4;
  const size_t start = kMagicBytes + 2 + static_cast<size_t>(lengthBytes);
  if (size < start) throw UsageError(path + ": truncated .npy header");
  const size_t headerBytes = littleEndian(bytes + kMagicBytes + 2, lengthBytes);
  if (size - start < headerBytes)
    throw UsageError(
        fmt::format("{}: truncated .npy header ({} bytes announced, {} present)", path, headerBytes, size - start));
  NpyHeader h = DictParser(std::string(reinterpret_cast<const char*>(bytes + start), headerBytes), path).parse();
  h.dataOffset = start + headerBytes;
  int64_t payload = h.itemBytes;
  for (int64_t d : h.shape) {
    if (d > 0 && payload > kMaxBytes / d)
      throw UsageError(
          fmt::format("{}: shape ({}) describes an implausibly large array", path, fmt::join(h.shape, ", ")));
    payload *= d;
  }
  const auto present = static_cast<int64_t>(size - h.dataOffset);
  if (present != payload)
    throw UsageError(fmt::format("{}: {}: shape ({}) of {} needs {} bytes of data, the file has {}", path,
                                 present < payload ? "truncated" : "trailing bytes", fmt::join(h.shape, ", "), h.dtype,
                                 payload, present));
  return h;
}

}  // namespace balancenet::data
