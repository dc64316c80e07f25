// NpyDataset: both splits are row ranges of the same two mapped arrays, converted row by row on demand.
#include "balancenet/data/NpyDataset.h"

#include <ATen/ATen.h>

#include <cstring>
#include <memory>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "balancenet/core/Error.h"
#include "balancenet/data/HeldOut.h"
#include "balancenet/data/MappedFile.h"
#include "balancenet/data/NpyFile.h"

namespace balancenet::data {

namespace {

// One mapped .npy array, addressed by row.
struct NpyArray {
  std::shared_ptr<const MappedFile> file;
  NpyHeader header;
  int64_t rowElements = 1;

  explicit NpyArray(const std::string& path) : file(std::make_shared<const MappedFile>(path)) {
    header = parseNpyHeader(file->data(), file->size(), path);
    if (header.shape.empty() || header.shape[0] == 0)
      throw UsageError(fmt::format("{}: shape ({}) has no rows; npy arrays are [N, ...] with N >= 1", path,
                                   fmt::join(header.shape, ", ")));
    for (size_t d = 1; d < header.shape.size(); ++d) rowElements *= header.shape[d];
  }
  int64_t rows() const { return header.shape[0]; }
  const std::string& path() const { return file->path(); }
  // The per-row shape; a 1-D array's rows are {1}.
  std::vector<int64_t> rowShape() const {
    if (header.shape.size() == 1) return {1};
    return {header.shape.begin() + 1, header.shape.end()};
  }
  const uint8_t* row(int64_t r) const {
    return file->data() + header.dataOffset + static_cast<size_t>(r * rowElements * header.itemBytes);
  }
};

// Reads element i of an integer array as int64 (the data offset keeps it aligned, but memcpy never cares).
int64_t integerAt(const NpyArray& a, int64_t i) {
  if (a.header.dtype == "i8") {
    int64_t v;
    std::memcpy(&v, a.row(0) + i * 8, 8);
    return v;
  }
  int32_t v;
  std::memcpy(&v, a.row(0) + i * 4, 4);
  return v;
}

class NpyDataset final : public Dataset {
 public:
  NpyDataset(DatasetSpec spec, std::shared_ptr<const NpyArray> x, std::shared_ptr<const NpyArray> y, int64_t first,
             int64_t count)
      : spec_(std::move(spec)), x_(std::move(x)), y_(std::move(y)), first_(first), count_(count) {}
  const DatasetSpec& spec() const override { return spec_; }
  int64_t size() const override { return count_; }

  Batch batch(const std::vector<int64_t>& indices) const override {
    const auto n = static_cast<int64_t>(indices.size());
    std::vector<int64_t> inShape{n}, outShape{n};
    inShape.insert(inShape.end(), spec_.inputShape.begin(), spec_.inputShape.end());
    if (spec_.target == TargetKind::Regression)
      outShape.insert(outShape.end(), spec_.targetShape.begin(), spec_.targetShape.end());
    Batch b{at::empty(inShape, at::kFloat),
            at::empty(outShape, spec_.target == TargetKind::Regression ? at::kFloat : at::kLong)};
    float* in = b.inputs.data_ptr<float>();
    for (int64_t k = 0; k < n; ++k) {
      const int64_t r = rowOf(indices[static_cast<size_t>(k)]);
      float* dst = in + k * x_->rowElements;
      if (x_->header.dtype == "u1") {
        const uint8_t* src = x_->row(r);
        for (int64_t j = 0; j < x_->rowElements; ++j) dst[j] = static_cast<float>(src[j]) / 255.0f;
      } else {
        std::memcpy(dst, x_->row(r), static_cast<size_t>(x_->rowElements) * sizeof(float));
      }
      if (spec_.target == TargetKind::Regression)
        std::memcpy(b.targets.data_ptr<float>() + k * y_->rowElements, y_->row(r),
                    static_cast<size_t>(y_->rowElements) * sizeof(float));
      else
        b.targets.data_ptr<int64_t>()[k] = integerAt(*y_, r);
    }
    return b;
  }

  std::vector<int64_t> classLabels() const override {
    if (spec_.target != TargetKind::Class) return {};
    std::vector<int64_t> out;
    out.reserve(static_cast<size_t>(count_));
    for (int64_t i = 0; i < count_; ++i) out.push_back(integerAt(*y_, first_ + i));
    return out;
  }

 private:
  int64_t rowOf(int64_t index) const {
    if (index < 0 || index >= count_)
      throw InternalError(fmt::format("npy sample {} requested of a set of {}", index, count_));
    return first_ + index;
  }
  DatasetSpec spec_;
  std::shared_ptr<const NpyArray> x_, y_;
  int64_t first_, count_;
};

// "X.npy,Y.npy": split after the first ".npy," (a directory may hold a comma), else at the first comma.
std::pair<std::string, std::string> splitPaths(const std::string& paths) {
  size_t cut = paths.find(".npy,");
  cut = cut == std::string::npos ? paths.find(',') : cut + 4;
  if (cut == std::string::npos || cut == 0 || cut + 1 >= paths.size())
    throw UsageError(fmt::format("npy:{}: give the inputs and the targets as npy:X.npy,Y.npy", paths));
  return {paths.substr(0, cut), paths.substr(cut + 1)};
}

// The class count (largest label + 1) after checking that no label is negative.
int64_t classCount(const NpyArray& y) {
  if (y.header.shape.size() != 1)
    throw UsageError(
        fmt::format("{}: class targets must be one label per row, shape (N,), not ({}); "
                    "use Y.reshape(-1), or float32 targets with --loss mse",
                    y.path(), fmt::join(y.header.shape, ", ")));
  int64_t largest = 0;
  for (int64_t i = 0; i < y.rows(); ++i) {
    const int64_t label = integerAt(y, i);
    if (label < 0) throw UsageError(fmt::format("{}: label {} of row {} is negative", y.path(), label, i));
    largest = std::max(largest, label);
  }
  return largest + 1;
}

DatasetSpec npySpec(const NpyArray& x, const NpyArray& y, const DataOptions& options) {
  const std::string& t = y.header.dtype;
  if (x.header.dtype != "f4" && x.header.dtype != "u1")
    throw UsageError(
        fmt::format("{}: inputs of dtype '{}' are not supported; X must be float32 or uint8 "
                    "(save X.astype(np.float32))",
                    x.path(), x.header.dtype));
  DatasetSpec spec;
  spec.inputShape = x.rowShape();
  spec.source = options.source;
  if (options.regressionTargets) {
    if (t != "f4")
      throw UsageError(
          fmt::format("{}: --loss mse needs float32 targets, not '{}' (save Y.astype(np.float32))", y.path(), t));
    spec.target = TargetKind::Regression;
    spec.targetShape = y.rowShape();
    return spec;
  }
  if (t == "f4")
    throw UsageError(
        fmt::format("{}: float32 targets are regression targets: train them with --loss mse "
                    "(class labels are int64 or int32)",
                    y.path()));
  if (t != "i8" && t != "i4")
    throw UsageError(
        fmt::format("{}: targets of dtype '{}' are not supported; class labels are int64 or int32 "
                    "(save Y.astype(np.int64)), regression targets float32",
                    y.path(), t));
  spec.target = TargetKind::Class;
  spec.classes = classCount(y);
  return spec;
}

}  // namespace

DatasetPair openNpy(const std::string& paths, const DataOptions& options) {
  const auto [xPath, yPath] = splitPaths(paths);
  auto x = std::make_shared<const NpyArray>(xPath);
  auto y = std::make_shared<const NpyArray>(yPath);
  if (x->rows() != y->rows())
    throw UsageError(
        fmt::format("{}: {} rows of targets, but {} has {} rows of inputs", yPath, y->rows(), xPath, x->rows()));
  const DatasetSpec spec = npySpec(*x, *y, options);
  const int64_t n = x->rows();
  const int64_t held = heldOutCount(n, options.valFraction);
  if (held >= n)
    throw UsageError(fmt::format("{}: {} row(s) leave none for training after holding out --val-fraction {}", xPath, n,
                                 options.valFraction));
  return {std::make_shared<NpyDataset>(spec, x, y, 0, n - held),
          std::make_shared<NpyDataset>(spec, x, y, n - held, held)};
}

}  // namespace balancenet::data
