// Tests of the npy: format: values equal numpy's bit for bit, targets of each kind, the held-out rows, defects.
#include "balancenet/data/NpyDataset.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cstring>

#include "testing/NumpyScript.h"
#include "testing/TempDir.h"
#include "testing/UsageErrors.h"

namespace balancenet::data {
namespace {

using balancenet::testing::runNumpy;
using balancenet::testing::TempDir;
using balancenet::testing::usageErrorOf;

// Rows `rows` of a raw C-order file of float32 or int64 `rowBytes` wide, as numpy's tofile() wrote them.
std::vector<uint8_t> rawRows(const TempDir& dir, const std::string& name, const std::vector<int64_t>& rows,
                             size_t rowBytes) {
  const std::vector<uint8_t> all = dir.readRaw(name);
  std::vector<uint8_t> out;
  for (int64_t r : rows) {
    const auto* p = all.data() + static_cast<size_t>(r) * rowBytes;
    out.insert(out.end(), p, p + rowBytes);
  }
  return out;
}

bool sameBytes(const at::Tensor& t, const std::vector<uint8_t>& bytes) {
  const at::Tensor c = t.contiguous();
  return static_cast<size_t>(c.nbytes()) == bytes.size() && std::memcmp(c.data_ptr(), bytes.data(), bytes.size()) == 0;
}

DataOptions npyOptions(const TempDir& dir, const std::string& x, const std::string& y, double valFraction = 0.2) {
  DataOptions o;
  o.source = "npy:" + dir.file(x) + "," + dir.file(y);
  o.valFraction = valFraction;
  return o;
}

DatasetPair open(const DataOptions& o) { return openNpy(o.source.substr(4), o); }

// X float32 [10, 2, 3] and uint8 [10, 4]; Y int64, int32, float32 [10] and [10, 2]; the expected inputs
// and targets as raw bytes (uint8 inputs: x.astype(float32) / 255, computed by numpy).
const char* kArrays = R"(
rng = np.random.default_rng(7)
xf = rng.standard_normal((10, 2, 3)).astype(np.float32)
xu = rng.integers(0, 256, (10, 4)).astype(np.uint8)
y8 = rng.integers(0, 5, 10).astype(np.int64); y8[3] = 8
yr = rng.standard_normal((10, 2)).astype(np.float32)
np.save(d + '/xf.npy', xf); xf.tofile(d + '/xf.raw')
np.save(d + '/xu.npy', xu); (xu.astype(np.float32) / np.float32(255)).tofile(d + '/xu.raw')
np.save(d + '/y8.npy', y8); y8.tofile(d + '/y8.raw')
np.save(d + '/y4.npy', y8.astype(np.int32))
np.save(d + '/yr.npy', yr); yr.tofile(d + '/yr.raw')
np.save(d + '/y1.npy', yr[:, 0].copy()); yr[:, 0].copy().tofile(d + '/y1.raw')
with open(d + '/xf2.npy', 'wb') as f:
    np.lib.format.write_array(f, xf, version=(2, 0))
)";

TEST(NpyDataset, Float32InputsAndInt64ClassesExactly) {
  REQUIRE_NUMPY();
  TempDir dir;
  ASSERT_EQ(runNumpy(dir.path(), kArrays), "");
  for (const char* x : {"xf.npy", "xf2.npy"}) {
    const DatasetPair pair = open(npyOptions(dir, x, "y8.npy"));
    const DatasetSpec& spec = pair.train->spec();
    EXPECT_EQ(spec.inputShape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(spec.target, TargetKind::Class);
    EXPECT_EQ(spec.classes, 9);
    EXPECT_TRUE(spec.targetShape.empty());
    EXPECT_FALSE(spec.tokenInput);
    // The last round(10 * 0.2) = 2 rows are held out.
    ASSERT_EQ(pair.train->size(), 8);
    ASSERT_EQ(pair.test->size(), 2);
    const Batch b = pair.train->batch({3, 0, 7, 3});
    ASSERT_EQ(b.inputs.sizes(), (std::vector<int64_t>{4, 2, 3}));
    EXPECT_EQ(b.inputs.scalar_type(), at::kFloat);
    EXPECT_TRUE(sameBytes(b.inputs, rawRows(dir, "xf.raw", {3, 0, 7, 3}, 24))) << x;
    EXPECT_TRUE(sameBytes(b.targets, rawRows(dir, "y8.raw", {3, 0, 7, 3}, 8)));
    const Batch t = pair.test->batch({1, 0});
    EXPECT_TRUE(sameBytes(t.inputs, rawRows(dir, "xf.raw", {9, 8}, 24)));
    EXPECT_TRUE(sameBytes(t.targets, rawRows(dir, "y8.raw", {9, 8}, 8)));
    const auto labels = pair.test->classLabels();
    EXPECT_TRUE(sameBytes(at::tensor(at::ArrayRef<int64_t>(labels)), rawRows(dir, "y8.raw", {8, 9}, 8)));
  }
}

TEST(NpyDataset, Uint8InputsScaledAndInt32Classes) {
  REQUIRE_NUMPY();
  TempDir dir;
  ASSERT_EQ(runNumpy(dir.path(), kArrays), "");
  const DatasetPair pair = open(npyOptions(dir, "xu.npy", "y4.npy", 0.1));
  EXPECT_EQ(pair.train->spec().inputShape, (std::vector<int64_t>{4}));
  EXPECT_EQ(pair.train->spec().classes, 9);
  ASSERT_EQ(pair.test->size(), 1);
  const Batch b = pair.train->batch({5, 1});
  EXPECT_TRUE(sameBytes(b.inputs, rawRows(dir, "xu.raw", {5, 1}, 16)));
  EXPECT_EQ(b.targets.scalar_type(), at::kLong);
  EXPECT_TRUE(sameBytes(b.targets, rawRows(dir, "y8.raw", {5, 1}, 8)));
  EXPECT_TRUE(sameBytes(pair.test->batch({0}).inputs, rawRows(dir, "xu.raw", {9}, 16)));
}

TEST(NpyDataset, RegressionTargetsKeepTheirShapeAndOneDimensionalOnesGetOne) {
  REQUIRE_NUMPY();
  TempDir dir;
  ASSERT_EQ(runNumpy(dir.path(), kArrays), "");
  DataOptions o = npyOptions(dir, "xf.npy", "yr.npy", 0);
  o.regressionTargets = true;
  const DatasetPair pair = open(o);
  EXPECT_EQ(pair.train->spec().target, TargetKind::Regression);
  EXPECT_EQ(pair.train->spec().classes, 0);
  EXPECT_EQ(pair.train->spec().targetShape, (std::vector<int64_t>{2}));
  EXPECT_TRUE(pair.train->classLabels().empty());
  EXPECT_EQ(pair.train->size(), 10);
  EXPECT_EQ(pair.test->size(), 0);
  const Batch b = pair.train->batch({9, 2});
  EXPECT_EQ(b.targets.scalar_type(), at::kFloat);
  EXPECT_TRUE(sameBytes(b.targets, rawRows(dir, "yr.raw", {9, 2}, 8)));

  const DatasetPair one = open([&] {
    DataOptions p = npyOptions(dir, "xf.npy", "y1.npy");
    p.regressionTargets = true;
    return p;
  }());
  EXPECT_EQ(one.train->spec().targetShape, (std::vector<int64_t>{1}));
  const Batch c = one.train->batch({4});
  EXPECT_EQ(c.targets.sizes(), (std::vector<int64_t>{1, 1}));
  EXPECT_TRUE(sameBytes(c.targets, rawRows(dir, "y1.raw", {4}, 4)));
}

TEST(NpyDataset, DefectsNameTheFile) {
  REQUIRE_NUMPY();
  TempDir dir;
  ASSERT_EQ(runNumpy(dir.path(), kArrays + std::string(R"(
np.save(d + '/y9.npy', np.arange(9, dtype=np.int64))
yn = np.arange(10, dtype=np.int64); yn[6] = -2; np.save(d + '/yn.npy', yn)
np.save(d + '/x64.npy', np.zeros((10, 2)))
np.save(d + '/y2d.npy', np.zeros((10, 2), dtype=np.int64))
np.save(d + '/yu8.npy', np.zeros(10, dtype=np.uint8))
np.save(d + '/xf1.npy', np.zeros((1, 2), dtype=np.float32)); np.save(d + '/y81.npy', np.zeros(1, dtype=np.int64))
np.save(d + '/x0.npy', np.zeros((0, 2), dtype=np.float32))
np.save(d + '/xfortran.npy', np.asfortranarray(np.zeros((10, 3), dtype=np.float32)))
)")),
            "");
  const auto err = [&](const std::string& x, const std::string& y, bool mse = false) {
    DataOptions o = npyOptions(dir, x, y);
    o.regressionTargets = mse;
    return usageErrorOf([&] { open(o); });
  };
  const auto f = [&](const std::string& name) { return dir.file(name) + ": "; };
  EXPECT_EQ(err("xf.npy", "y9.npy"),
            f("y9.npy") + "9 rows of targets, but " + dir.file("xf.npy") + " has 10 rows of inputs");
  EXPECT_EQ(err("xf.npy", "yn.npy"), f("yn.npy") + "label -2 of row 6 is negative");
  EXPECT_EQ(
      err("x64.npy", "y8.npy"),
      f("x64.npy") + "inputs of dtype 'f8' are not supported; X must be float32 or uint8 (save X.astype(np.float32))");
  EXPECT_EQ(err("xf.npy", "yr.npy"), f("yr.npy") +
                                         "float32 targets are regression targets: train them with --loss "
                                         "mse (class labels are int64 or int32)");
  EXPECT_EQ(err("xf.npy", "y8.npy", true),
            f("y8.npy") + "--loss mse needs float32 targets, not 'i8' (save Y.astype(np.float32))");
  EXPECT_EQ(err("xf.npy", "y2d.npy"), f("y2d.npy") +
                                          "class targets must be one label per row, shape (N,), not (10, 2); "
                                          "use Y.reshape(-1), or float32 targets with --loss mse");
  EXPECT_EQ(err("xf.npy", "yu8.npy"), f("yu8.npy") +
                                          "targets of dtype 'u1' are not supported; class labels are int64 "
                                          "or int32 (save Y.astype(np.int64)), regression targets float32");
  EXPECT_EQ(err("xf1.npy", "y81.npy"),
            f("xf1.npy") + "1 row(s) leave none for training after holding out --val-fraction 0.2");
  EXPECT_EQ(err("x0.npy", "y8.npy"), f("x0.npy") + "shape (0, 2) has no rows; npy arrays are [N, ...] with N >= 1");
  EXPECT_EQ(err("xfortran.npy", "y8.npy"),
            f("xfortran.npy") + "the array is in Fortran order; save it with np.save(path, np.ascontiguousarray(a))");
  EXPECT_EQ(err("nothere.npy", "y8.npy"), f("nothere.npy") + "no such file");
  DataOptions o = npyOptions(dir, "xf.npy", "y8.npy");
  EXPECT_EQ(usageErrorOf([&] { openNpy(dir.file("xf.npy"), o); }),
            "npy:" + dir.file("xf.npy") + ": give the inputs and the targets as npy:X.npy,Y.npy");
  o.valFraction = 1;
  EXPECT_EQ(usageErrorOf([&] { open(o); }), "--val-fraction 1: must be at least 0 and below 1");
}

}  // namespace
}  // namespace balancenet::data
