// The imagefolder loader's training throughput: images/s decoded, resized, cropped, flipped and normalised.
// Usage: bench_loader DIR SIZE SECONDS [BATCH]   (one loader thread, one intra-op thread)
// Prints one line: "images_per_second X images N seconds T". bench/loader_vs_torchvision.sh runs it beside
// torchvision's DataLoader with the same transforms.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "balancenet/core/IntraOpThreads.h"
#include "balancenet/data/Draw.h"
#include "balancenet/data/ImageFolderDataset.h"

using namespace balancenet;

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: bench_loader DIR SIZE SECONDS [BATCH]\n");
    return 2;
  }
  try {
    setIntraOpThreads(1);
    data::DataOptions options;
    options.source = std::string("imagefolder:") + argv[1];
    options.imageSize = std::atoll(argv[2]);
    options.augmentCrop = options.augmentFlip = true;
    options.cropPadding = 4;
    options.valFraction = 0.0;
    options.loaderThreads = 1;
    // Given statistics (torchvision's Normalize takes them too): the open computes none, the work timed is
    // the same per image either way.
    options.normalizeMean = {0.5, 0.5, 0.5};
    options.normalizeStd = {0.25, 0.25, 0.25};
    const double seconds = std::atof(argv[3]);
    const int64_t batch = argc > 4 ? std::atoll(argv[4]) : 128;
    auto train = data::openImageFolder(argv[1], options).train;

    // Epochs over the set in order, fresh augmentation seeds per epoch (as training draws them), until the
    // time is up; the first batch is a warm-up left out (page cache, first allocations).
    int64_t images = 0, epoch = 0, next = 0;
    auto draws = [&] {
      std::vector<data::Draw> d;
      for (int64_t i = 0; i < batch; ++i, ++next) {
        if (next == train->size()) next = 0, ++epoch;
        d.push_back({next, data::augmentSeed(1, epoch, next)});
      }
      return d;
    };
    train->trainingBatch(draws());
    const auto start = std::chrono::steady_clock::now();
    double elapsed = 0;
    while (elapsed < seconds) {
      auto b = train->trainingBatch(draws());
      images += b.inputs.size(0);
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    std::printf("images_per_second %.1f images %lld seconds %.2f\n", images / elapsed, static_cast<long long>(images),
                elapsed);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_loader: %s\n", e.what());
    return 2;
  }
  return 0;
}
