// Cifar10Dataset: each batch file checked and copied once into uint8 tensors, then normalised.
#include "balancenet/data/Cifar10Dataset.h"

#include <ATen/ATen.h>

#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/data/LabelledImages.h"
#include "balancenet/data/MappedFile.h"
#include "balancenet/data/SourceKey.h"

namespace balancenet::data {

namespace {

// The folder holding the batches: `dir` itself, or the one the archive unpacks to inside it.
std::string batchFolder(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw UsageError(fmt::format("cifar10:{}: no such directory", dir));
  for (const fs::path& folder : {fs::path(dir), fs::path(dir) / "cifar-10-batches-bin"})
    if (fs::exists(folder / "data_batch_1.bin", ec)) return folder.string();
  throw UsageError(fmt::format(
      "cifar10:{}: no data_batch_1.bin here or in cifar-10-batches-bin/ (the binary version of CIFAR-10)", dir));
}

// Records of all `paths`, one after another: uint8 [N, kCifarRecordBytes].
at::Tensor readRecords(const std::vector<std::string>& paths) {
  std::vector<at::Tensor> parts;
  for (const std::string& path : paths) {
    const MappedFile file(path);
    if (file.size() == 0) throw UsageError(fmt::format("{}: empty file, expected CIFAR-10 records", path));
    if (file.size() % kCifarRecordBytes != 0)
      throw UsageError(
          fmt::format("{}: {} bytes is not a whole number of {}-byte records (1 label byte and "
                      "3x32x32 pixels): not a CIFAR-10 binary batch",
                      path, file.size(), kCifarRecordBytes));
    const auto n = static_cast<int64_t>(file.size()) / kCifarRecordBytes;
    // from_blob borrows the mapping; clone() copies before it is unmapped.
    at::Tensor records =
        at::from_blob(const_cast<uint8_t*>(file.data()), {n, kCifarRecordBytes}, at::TensorOptions().dtype(at::kByte))
            .clone();
    const at::Tensor bad = records.select(1, 0).ge(kCifarClasses).nonzero();
    if (bad.numel() > 0) {
      const int64_t i = bad[0][0].item<int64_t>();
      throw UsageError(fmt::format("{}: label {} of record {} is out of range 0..{}", path,
                                   int{records[i][0].item<uint8_t>()}, i, kCifarClasses - 1));
    }
    parts.push_back(records);
  }
  return at::cat(parts);
}

LabelledImages splitRecords(const at::Tensor& records) {
  const int64_t n = records.size(0);
  return {records.slice(1, 1).reshape({n, 3, kCifarSide, kCifarSide}).contiguous(), records.select(1, 0).to(at::kLong)};
}

}  // namespace

DatasetPair openCifar10(const std::string& dir, const DataOptions& options) {
  const std::string folder = batchFolder(dir);
  std::vector<std::string> trainPaths;
  for (int b = 1; b <= 5; ++b) trainPaths.push_back(fmt::format("{}/data_batch_{}.bin", folder, b));
  const std::string testPath = folder + "/test_batch.bin";

  DatasetSpec spec;
  spec.inputShape = {3, kCifarSide, kCifarSide};
  spec.target = TargetKind::Class;
  spec.classes = kCifarClasses;
  spec.source = options.source;
  // Training first, so that its defects are reported first (argument order is unspecified).
  const LabelledImages train = splitRecords(readRecords(trainPaths));
  const LabelledImages test = splitRecords(readRecords({testPath}));
  return normalizedImagePair(spec, train, test, options, sourceKey("cifar10", trainPaths));
}

}  // namespace balancenet::data
