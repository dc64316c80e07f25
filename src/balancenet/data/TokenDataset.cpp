// TokenDataset: a mapped token stream cut into two splits of whole windows, copied out window by window.
#include "balancenet/data/TokenDataset.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/data/HeldOut.h"
#include "balancenet/data/MappedFile.h"

namespace balancenet::data {

namespace {

// The token ids of a mapped file: `count` little-endian unsigned integers of `width` bytes from `offset`.
struct TokenStream {
  std::shared_ptr<const MappedFile> file;
  size_t offset = 0;
  int width = 1;
  int64_t count = 0;

  int64_t at(int64_t i) const {
    const uint8_t* p = file->data() + offset + static_cast<size_t>(i) * static_cast<size_t>(width);
    if (width == 1) return *p;
    if (width == 2) {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
};

class TokenWindows final : public Dataset {
 public:
  TokenWindows(DatasetSpec spec, TokenStream stream, int64_t firstToken, int64_t windows)
      : spec_(std::move(spec)), stream_(std::move(stream)), first_(firstToken), windows_(windows) {}
  const DatasetSpec& spec() const override { return spec_; }
  int64_t size() const override { return windows_; }

  Batch batch(const std::vector<int64_t>& indices) const override {
    const int64_t t = spec_.inputShape[0];
    const auto n = static_cast<int64_t>(indices.size());
    Batch b{at::empty({n, t}, at::kLong), at::empty({n, t}, at::kLong)};
    int64_t* in = b.inputs.data_ptr<int64_t>();
    int64_t* out = b.targets.data_ptr<int64_t>();
    for (int64_t k = 0; k < n; ++k) {
      const int64_t w = indices[static_cast<size_t>(k)];
      if (w < 0 || w >= windows_)
        throw InternalError(fmt::format("token window {} requested of a set of {}", w, windows_));
      const int64_t start = first_ + w * t;
      // Each token but the first is the target of the one before it.
      int64_t previous = stream_.at(start);
      for (int64_t j = 0; j < t; ++j) {
        const int64_t next = stream_.at(start + j + 1);
        in[k * t + j] = previous;
        out[k * t + j] = next;
        previous = next;
      }
    }
    return b;
  }

 private:
  DatasetSpec spec_;
  TokenStream stream_;
  int64_t first_, windows_;
};

// llm.c's header, when the file starts with its magic; otherwise a flat file of `flatWidth`-byte tokens.
TokenStream tokenStream(const std::string& path, int flatWidth, bool llmcHeader) {
  TokenStream s;
  s.file = std::make_shared<const MappedFile>(path);
  const size_t size = s.file->size();
  int32_t header[3] = {0, 0, 0};
  if (llmcHeader && size >= 3 * sizeof(int32_t)) std::memcpy(header, s.file->data(), sizeof header);
  if (llmcHeader && header[0] == kLlmcMagic) {
    if (header[1] != 1 && header[1] != 2)
      throw UsageError(
          fmt::format("{}: llm.c token file of version {}; versions 1 (uint16) and 2 (uint32) exist", path, header[1]));
    s.width = header[1] == 1 ? 2 : 4;
    s.offset = kLlmcHeaderBytes;
    s.count = header[2];
    const auto expected = static_cast<size_t>(kLlmcHeaderBytes + s.count * s.width);
    if (header[2] < 0 || size != expected)
      throw UsageError(
          fmt::format("{}: the llm.c header announces {} tokens of {} bytes ({} bytes with the header), "
                      "the file has {} bytes",
                      path, header[2], s.width, expected, size));
    return s;
  }
  s.width = flatWidth;
  if (size % static_cast<size_t>(flatWidth) != 0)
    throw UsageError(fmt::format("{}: {} bytes is not a whole number of {}-byte tokens", path, size, flatWidth));
  s.count = static_cast<int64_t>(size) / flatWidth;
  return s;
}

// Largest id + 1, rounded up to kVocabMultiple; an id that cannot be a vocabulary's is the wrong format.
int64_t vocabularyOf(const TokenStream& s) {
  int64_t largest = 0;
  for (int64_t i = 0; i < s.count; ++i) {
    const int64_t id = s.at(i);
    if (id >= kMaxVocab)
      throw UsageError(fmt::format("{}: token {} is id {}, beyond any vocabulary (2^24): not a file of token ids",
                                   s.file->path(), i, id));
    largest = std::max(largest, id);
  }
  return (largest + kVocabMultiple) / kVocabMultiple * kVocabMultiple;
}

DatasetPair tokenWindows(const std::string& format, const std::string& path, const DataOptions& options,
                         TokenStream stream, int64_t vocabulary) {
  const int64_t t = options.context;
  const int64_t n = stream.count;
  // Every window needs one token beyond it: its last position's target.
  const int64_t held = heldOutCount(n > 0 ? (n - 1) / t : 0, options.valFraction);
  const int64_t testStart = held > 0 ? n - held * t - 1 : n;
  const int64_t trainWindows = testStart > 0 ? (testStart - 1) / t : 0;
  if (trainWindows < 1) {
    const int64_t need = (t + 1) * (options.valFraction > 0 ? 2 : 1);
    throw UsageError(fmt::format("{}: {} tokens hold no whole window of --context {} for training{} ({} needed)", path,
                                 n, t, options.valFraction > 0 ? " and held-out" : "", need));
  }
  DatasetSpec spec;
  spec.inputShape = {t};
  spec.tokenInput = true;
  spec.target = TargetKind::Tokens;
  spec.classes = vocabulary;
  spec.targetShape = {t};
  spec.bytesAsTokens = format == "text";
  spec.source = options.source;
  return {std::make_shared<TokenWindows>(spec, stream, 0, trainWindows),
          std::make_shared<TokenWindows>(spec, stream, testStart, held)};
}

void requireContext(const std::string& format, const std::string& path, const DataOptions& options) {
  if (options.context < 1)
    throw UsageError(
        fmt::format("{}:{}: --context is required (the window length in tokens, at least 1)", format, path));
}

}  // namespace

DatasetPair openTokens(const std::string& path, const DataOptions& options) {
  requireContext("tokens", path, options);
  TokenStream s = tokenStream(path, 2, /*llmcHeader=*/true);
  const int64_t vocabulary = vocabularyOf(s);
  return tokenWindows("tokens", path, options, std::move(s), vocabulary);
}

DatasetPair openTokens32(const std::string& path, const DataOptions& options) {
  requireContext("tokens32", path, options);
  TokenStream s = tokenStream(path, 4, /*llmcHeader=*/false);
  const int64_t vocabulary = vocabularyOf(s);
  return tokenWindows("tokens32", path, options, std::move(s), vocabulary);
}

DatasetPair openText(const std::string& path, const DataOptions& options) {
  requireContext("text", path, options);
  return tokenWindows("text", path, options, tokenStream(path, 1, /*llmcHeader=*/false), 256);
}

}  // namespace balancenet::data
