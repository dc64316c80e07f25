// Normalization: per-channel statistics, their cache beside the run, and applying them.
#include "balancenet/data/Normalization.h"

#include <ATen/ATen.h>

#include <filesystem>
#include <fstream>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "balancenet/core/AtomicFile.h"
#include "balancenet/core/Error.h"

namespace balancenet::data {

ChannelStats channelStats(const at::Tensor& imagesUint8) {
  // Double accumulation: a float32 sum over 47M pixels (Fashion-MNIST) loses the third digit.
  const at::Tensor x = imagesUint8.to(at::kDouble).div_(255.0).transpose(0, 1).reshape({imagesUint8.size(1), -1});
  const at::Tensor mean = x.mean(1);
  const at::Tensor std = x.var(1, /*unbiased=*/false).sqrt_();
  ChannelStats s;
  for (int64_t c = 0; c < x.size(0); ++c) {
    s.mean.push_back(mean[c].item<double>());
    s.std.push_back(std::max(std[c].item<double>(), 1e-6));
  }
  return s;
}

namespace {

std::vector<double> perChannel(const std::vector<double>& given, int64_t channels, const char* what) {
  if (given.size() == 1) return std::vector<double>(static_cast<size_t>(channels), given[0]);
  if (static_cast<int64_t>(given.size()) != channels)
    throw UsageError(fmt::format("--normalize: {} {} values for {} channel(s); give 1 or {}", given.size(), what,
                                 channels, channels));
  return given;
}

std::string cachePath(const DataOptions& options, const std::string& cacheKey) {
  return fmt::format("{}/normalization-{:016x}.json", options.cacheDir, std::hash<std::string>{}(cacheKey));
}

std::optional<ChannelStats> readCache(const std::string& path, const std::string& cacheKey, int64_t channels) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    const auto j = nlohmann::json::parse(in);
    if (j.at("key").get<std::string>() != cacheKey) return std::nullopt;
    ChannelStats s{j.at("mean").get<std::vector<double>>(), j.at("std").get<std::vector<double>>()};
    if (static_cast<int64_t>(s.mean.size()) != channels || s.std.size() != s.mean.size()) return std::nullopt;
    return s;
  } catch (const std::exception&) {
    return std::nullopt;  // a damaged cache is recomputed, not an error
  }
}

}  // namespace

ChannelStats resolveNormalization(const DataOptions& options, int64_t channels, const std::string& cacheKey,
                                  const std::function<ChannelStats()>& compute) {
  if (!options.normalizeMean.empty()) {
    ChannelStats s{perChannel(options.normalizeMean, channels, "mean"),
                   perChannel(options.normalizeStd, channels, "std")};
    for (double v : s.std)
      if (!(v > 0)) throw UsageError(fmt::format("--normalize: std must be positive, got {}", v));
    return s;
  }
  const std::string path = options.cacheDir.empty() ? std::string() : cachePath(options, cacheKey);
  if (!path.empty())
    if (auto cached = readCache(path, cacheKey, channels)) return *cached;
  ChannelStats s = compute();
  if (!path.empty()) {
    try {
      ensureDirectory(options.cacheDir);
      const nlohmann::json j = {{"key", cacheKey}, {"mean", s.mean}, {"std", s.std}};
      writeFileAtomically(path, j.dump(2) + "\n");
    } catch (const std::exception&) {
      // A read-only home only costs recomputing next time.
    }
  }
  return s;
}

at::Tensor normalizeImages(const at::Tensor& imagesUint8, const ChannelStats& stats) {
  const int64_t c = imagesUint8.size(1);
  const auto opts = at::TensorOptions().dtype(at::kFloat);
  const at::Tensor mean = at::tensor(at::ArrayRef<double>(stats.mean), opts).view({1, c, 1, 1});
  const at::Tensor std = at::tensor(at::ArrayRef<double>(stats.std), opts).view({1, c, 1, 1});
  return imagesUint8.to(at::kFloat).div_(255.0).sub_(mean).div_(std);
}

}  // namespace balancenet::data
