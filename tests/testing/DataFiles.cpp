// Data files for tests, in each format, by the writers users have (PIL, numpy) where there is one.
#include "testing/DataFiles.h"

#include <array>
#include <filesystem>
#include <fstream>

#include "testing/NumpyScript.h"
#include "testing/ProcessRunner.h"

namespace balancenet::testing {

std::string writeImageFolder(const std::string& dir, int classes, int perClass) {
  std::string names;
  for (int c = 0; c < classes; ++c) names += (c ? ",class" : "class") + std::to_string(c);
  const auto r =
      runProcess({BALANCENET_PYTHON_EXE, std::string(BALANCENET_SOURCE_DIR) + "/tests/unit/data/write_test_images.py",
                  "folder", dir, names, std::to_string(perClass), "RGB", "png"});
  return r.exitCode == 0 ? "" : "write_test_images.py exited " + std::to_string(r.exitCode) + ": " + r.output;
}

std::string writeTextCorpus(const std::string& path, int64_t bytes) {
  static const std::array<const char*, 12> kWords{"the",  "cluster", "trains", "a",     "model", "on",
                                                  "data", "while",   "slow",   "nodes", "wait",  "less"};
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary);
  uint64_t state = 12345;
  int64_t written = 0;
  while (written < bytes) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;  // Knuth's LCG: a fixed word order
    std::string word = kWords[(state >> 33) % kWords.size()];
    word += (state >> 40) % 9 == 0 ? ".\n" : " ";
    out.write(word.data(), static_cast<std::streamsize>(word.size()));
    written += static_cast<int64_t>(word.size());
  }
  return out ? "" : "cannot write " + path;
}

std::string writeNpyRegression(const std::string& dir, int64_t n) {
  return runNumpy(dir, R"(
n = int(sys.argv[2])
rng = np.random.default_rng(3)
x = rng.standard_normal((n, 6)).astype(np.float32)
w = rng.standard_normal((6, 2)).astype(np.float32)
np.save(d + '/x.npy', x)
np.save(d + '/y.npy', (x @ w + 0.1 * rng.standard_normal((n, 2))).astype(np.float32))
)",
                  {std::to_string(n)});
}

std::string writeCifar10Batches(const std::string& dir, int perBatch, const std::string& folder) {
  return runNumpy(dir, R"(
import os
per, folder = int(sys.argv[2]), os.path.join(d, sys.argv[3])
os.makedirs(folder, exist_ok=True)
y, x, c = np.meshgrid(np.arange(32), np.arange(32), np.arange(3), indexing='ij')
for b in range(1, 7):
    recs = []
    for i in range(per):
        s = (b - 1) * per + i
        img = ((s * 7 + y * 32 + x * 3 + c * 50) % 256).astype(np.uint8)
        recs.append(np.concatenate([[s % 10], img[:, :, 0].ravel(), img[:, :, 1].ravel(), img[:, :, 2].ravel()]))
    name = 'test_batch.bin' if b == 6 else 'data_batch_%d.bin' % b
    np.array(recs, dtype=np.uint8).tofile(os.path.join(folder, name))
)",
                  {std::to_string(perBatch), folder});
}

}  // namespace balancenet::testing
