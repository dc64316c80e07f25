// ImageFolderDataset: header checks at open, on-demand decoding on loader threads, replacement of bad files.
#include "balancenet/data/ImageFolderDataset.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "balancenet/core/Error.h"
#include "balancenet/data/ImageDecode.h"
#include "balancenet/data/ImageFolderLayout.h"
#include "balancenet/data/ImageTransform.h"
#include "balancenet/data/LoaderThreads.h"
#include "balancenet/data/Normalization.h"

namespace balancenet::data {

namespace {

struct FolderSettings {
  std::string dir;
  std::vector<std::string> classes;
  int64_t size = kDefaultImageSize, channels = 1;
  bool crop = false, flip = false;
  int64_t padding = 0;
  int threads = 1;
};

class ImageFolderDataset final : public Dataset {
 public:
  ImageFolderDataset(DatasetSpec spec, std::vector<ImageFile> files, FolderSettings settings)
      : spec_(std::move(spec)), files_(std::move(files)), settings_(std::move(settings)) {
    byClass_.resize(settings_.classes.size());
    for (size_t i = 0; i < files_.size(); ++i)
      byClass_[static_cast<size_t>(files_[i].label)].push_back(static_cast<int64_t>(i));
  }

  const DatasetSpec& spec() const override { return spec_; }
  int64_t size() const override { return static_cast<int64_t>(files_.size()); }
  Batch batch(const std::vector<int64_t>& indices) const override { return assemble(indices, {}); }
  Batch trainingBatch(const std::vector<Draw>& draws) const override;
  std::vector<int64_t> classLabels() const override;
  int64_t skippedSamples() const override { return skipped_.load(); }

  void setStatistics(ChannelStats stats) { stats_ = std::move(stats); }
  // Decoded and resized, not normalised: uint8 [n, C, S, S] (the statistics' input).
  at::Tensor pixels(const std::vector<int64_t>& indices) const;

 private:
  Image load(int64_t index) const;
  Image loadFile(int64_t index) const;
  // Loads the images at `indices` on the loader threads, handing each to use(position, image).
  void loadEach(const std::vector<int64_t>& indices, const std::function<void(int64_t, const Image&)>& use) const;
  Batch assemble(const std::vector<int64_t>& indices, const std::vector<AugmentDraw>& draws) const;
  bool knownBad(int64_t index) const;
  void markBad(int64_t index, const std::string& why) const;

  DatasetSpec spec_;
  std::vector<ImageFile> files_;
  FolderSettings settings_;
  std::vector<std::vector<int64_t>> byClass_;  // file indices of each class, in order
  ChannelStats stats_;
  mutable std::mutex badMutex_;
  mutable std::unordered_set<int64_t> bad_;
  mutable std::atomic<int64_t> skipped_{0};
};

Image ImageFolderDataset::loadFile(int64_t index) const {
  // Decoded at the smallest JPEG scale still at least the target size: the resize then shrinks less.
  const Image decoded = decodeImage(files_[static_cast<size_t>(index)].path, settings_.size);
  return resizeImage(toChannels(decoded, settings_.channels), settings_.size);
}

bool ImageFolderDataset::knownBad(int64_t index) const {
  std::lock_guard<std::mutex> lock(badMutex_);
  return bad_.count(index) > 0;
}

void ImageFolderDataset::markBad(int64_t index, const std::string& why) const {
  std::lock_guard<std::mutex> lock(badMutex_);
  if (!bad_.insert(index).second) return;
  if (skipped_.fetch_add(1) == 0)
    spdlog::warn(
        "imagefolder {}: {}; such files are replaced by the next image of their class and counted "
        "(skipped samples)",
        settings_.dir, firstLine(why));
}

// The file, or the first one after it in its class (cyclically) that decodes: which one depends only on
// which files are bad, never on the threads or the order batches come in.
Image ImageFolderDataset::load(int64_t index) const {
  const int64_t label = files_.at(static_cast<size_t>(index)).label;
  const std::vector<int64_t>& members = byClass_[static_cast<size_t>(label)];
  const auto start = std::lower_bound(members.begin(), members.end(), index) - members.begin();
  for (size_t k = 0; k < members.size(); ++k) {
    const int64_t candidate = members[(static_cast<size_t>(start) + k) % members.size()];
    if (knownBad(candidate)) continue;
    try {
      return loadFile(candidate);
    } catch (const UsageError& e) {
      markBad(candidate, e.what());
    }
  }
  throw UsageError(fmt::format("imagefolder {}: no image of class {} could be decoded", settings_.dir,
                               settings_.classes[static_cast<size_t>(label)]));
}

void ImageFolderDataset::loadEach(const std::vector<int64_t>& indices,
                                  const std::function<void(int64_t, const Image&)>& use) const {
  forEachChunk(static_cast<int64_t>(indices.size()), settings_.threads, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) use(i, load(indices[static_cast<size_t>(i)]));
  });
}

Batch ImageFolderDataset::assemble(const std::vector<int64_t>& indices, const std::vector<AugmentDraw>& draws) const {
  const auto n = static_cast<int64_t>(indices.size());
  const int64_t c = settings_.channels, s = settings_.size;
  at::Tensor inputs = at::empty({n, c, s, s}, at::TensorOptions().dtype(at::kFloat));
  float* out = inputs.data_ptr<float>();
  const bool augmented = !draws.empty();
  loadEach(indices, [&](int64_t i, const Image& image) {
    writeNormalized(image, augmented ? draws[static_cast<size_t>(i)] : AugmentDraw{}, augmented ? settings_.padding : 0,
                    stats_.mean, stats_.std, out + i * c * s * s);
  });
  std::vector<int64_t> labels;
  labels.reserve(indices.size());
  for (int64_t i : indices) labels.push_back(files_.at(static_cast<size_t>(i)).label);
  return {inputs, at::tensor(at::ArrayRef<int64_t>(labels), at::TensorOptions().dtype(at::kLong))};
}

Batch ImageFolderDataset::trainingBatch(const std::vector<Draw>& draws) const {
  std::vector<int64_t> indices;
  std::vector<AugmentDraw> augment;
  for (const Draw& d : draws) {
    indices.push_back(d.index);
    if (settings_.crop || settings_.flip)
      augment.push_back(drawAugmentation(d.augmentSeed, settings_.crop, settings_.flip, settings_.padding));
  }
  return assemble(indices, augment);
}

std::vector<int64_t> ImageFolderDataset::classLabels() const {
  std::vector<int64_t> labels;
  labels.reserve(files_.size());
  for (const ImageFile& f : files_) labels.push_back(f.label);
  return labels;
}

at::Tensor ImageFolderDataset::pixels(const std::vector<int64_t>& indices) const {
  const auto n = static_cast<int64_t>(indices.size());
  const int64_t c = settings_.channels, s = settings_.size;
  at::Tensor out = at::empty({n, c, s, s}, at::TensorOptions().dtype(at::kByte));
  uint8_t* base = out.data_ptr<uint8_t>();
  loadEach(indices, [&](int64_t i, const Image& image) {
    for (int64_t p = 0; p < s * s; ++p)  // HWC to CHW
      for (int64_t ch = 0; ch < c; ++ch) base[(i * c + ch) * s * s + p] = image.pixels[static_cast<size_t>(p * c + ch)];
  });
  return out;
}

// Every file's header on the loader threads: a bad one is the open's UsageError. 3 if any is colour.
int64_t channelsOf(const std::vector<ImageFile>& files, int threads) {
  std::atomic<bool> colour{false};
  forEachChunk(static_cast<int64_t>(files.size()), threads, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      if (readImageHeader(files[static_cast<size_t>(i)].path).channels == 3) colour = true;
  });
  return colour ? 3 : 1;
}

// What identifies the statistics: the folder, S, C and every training file's path, size and modification
// time (FNV-1a: the same digest on every platform).
std::string statisticsKey(const FolderSettings& settings, const std::vector<ImageFile>& files) {
  uint64_t digest = 0xcbf29ce484222325ULL;
  auto mix = [&digest](const std::string& text) {
    for (unsigned char ch : text) digest = (digest ^ ch) * 0x100000001b3ULL;
  };
  for (const ImageFile& f : files) {
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(f.path, ec);
    const auto modified = std::filesystem::last_write_time(f.path, ec).time_since_epoch().count();
    mix(fmt::format("{}|{}|{}\n", f.path, bytes, modified));
  }
  return fmt::format("imagefolder:{} size {} channels {} files {} digest {:016x}", settings.dir, settings.size,
                     settings.channels, files.size(), digest);
}

}  // namespace

DatasetPair openImageFolder(const std::string& dir, const DataOptions& options) {
  if (options.imageSize < 0) throw UsageError(fmt::format("--image-size {}: must be positive", options.imageSize));
  if (options.cropPadding < 0) throw UsageError(fmt::format("crop padding {}: must be >= 0", options.cropPadding));
  ImageFolderLayout layout = scanImageFolder(dir, options.valFraction);
  FolderSettings settings;
  settings.dir = dir;
  settings.classes = layout.classes;
  settings.size = options.imageSize == 0 ? kDefaultImageSize : options.imageSize;
  settings.crop = options.augmentCrop;
  settings.flip = options.augmentFlip;
  settings.padding = options.cropPadding;
  settings.threads = std::max(1, options.loaderThreads);
  settings.channels = std::max(channelsOf(layout.train, settings.threads), channelsOf(layout.val, settings.threads));

  DatasetSpec spec;
  spec.inputShape = {settings.channels, settings.size, settings.size};
  spec.target = TargetKind::Class;
  spec.classes = static_cast<int64_t>(layout.classes.size());
  spec.source = "imagefolder:" + dir;

  const std::string key = statisticsKey(settings, layout.train);
  auto train = std::make_shared<ImageFolderDataset>(spec, std::move(layout.train), settings);
  auto test = std::make_shared<ImageFolderDataset>(spec, std::move(layout.val), settings);
  const ChannelStats stats = resolveNormalization(options, settings.channels, key, [&] {
    const int64_t n = train->size(), m = std::min(n, kNormalizationSampleImages);
    std::vector<int64_t> sample;
    for (int64_t i = 0; i < m; ++i) sample.push_back(i * n / m);  // evenly spaced: every class, no seed
    return channelStats(train->pixels(sample));
  });
  train->setStatistics(stats);
  test->setStatistics(stats);
  return {train, test};
}

}  // namespace balancenet::data
