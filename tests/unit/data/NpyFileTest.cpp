// Tests of the .npy header parser on files numpy writes (versions 1.0, 2.0, 3.0) and on damaged ones.
#include "balancenet/data/NpyFile.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "balancenet/data/MappedFile.h"
#include "testing/NumpyScript.h"
#include "testing/TempDir.h"
#include "testing/UsageErrors.h"

namespace balancenet::data {
namespace {

using balancenet::testing::runNumpy;
using balancenet::testing::TempDir;
using balancenet::testing::usageErrorOf;

NpyHeader headerOf(const std::string& path) {
  const MappedFile f(path);
  return parseNpyHeader(f.data(), f.size(), path);
}

TEST(NpyFile, ReadsEveryVersionNumpyWrites) {
  REQUIRE_NUMPY();
  TempDir dir;
  ASSERT_EQ(runNumpy(dir.path(), R"(
a = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
for v in (1, 2, 3):
    with open(d + '/v%d.npy' % v, 'wb') as f:
        np.lib.format.write_array(f, a, version=(v, 0))
a.tofile(d + '/a.raw')
np.save(d + '/u8.npy', np.arange(5, dtype=np.uint8))
np.save(d + '/i4.npy', np.zeros((2, 1, 3), dtype=np.int32))
)"),
            "");
  const std::vector<uint8_t> raw = dir.readRaw("a.raw");
  for (int v : {1, 2, 3}) {
    const std::string path = dir.file("v" + std::to_string(v) + ".npy");
    const NpyHeader h = headerOf(path);
    EXPECT_EQ(h.dtype, "f4") << "version " << v;
    EXPECT_EQ(h.shape, (std::vector<int64_t>{4, 3}));
    EXPECT_EQ(h.itemBytes, 4);
    EXPECT_EQ(h.elements(), 12);
    EXPECT_EQ(h.dataOffset % 16, 0u) << "numpy aligns the data";
    const MappedFile f(path);
    ASSERT_EQ(f.size() - h.dataOffset, raw.size());
    EXPECT_EQ(std::memcmp(f.data() + h.dataOffset, raw.data(), raw.size()), 0) << "version " << v;
  }
  const NpyHeader u8 = headerOf(dir.file("u8.npy"));
  EXPECT_EQ(u8.dtype, "u1");
  EXPECT_EQ(u8.itemBytes, 1);
  EXPECT_EQ(u8.shape, (std::vector<int64_t>{5}));
  const NpyHeader i4 = headerOf(dir.file("i4.npy"));
  EXPECT_EQ(i4.dtype, "i4");
  EXPECT_EQ(i4.shape, (std::vector<int64_t>{2, 1, 3}));
}

TEST(NpyFile, DefectsNameTheFile) {
  REQUIRE_NUMPY();
  TempDir dir;
  ASSERT_EQ(runNumpy(dir.path(), R"(
a = np.arange(6, dtype=np.float32).reshape(2, 3)
np.save(d + '/fortran.npy', np.asfortranarray(a))
np.save(d + '/big.npy', a.astype('>f4'))
np.save(d + '/fields.npy', np.zeros(2, dtype=[('x', '<f4'), ('y', '<i8')]))
np.save(d + '/objects.npy', np.array([{}, None], dtype=object), allow_pickle=True)
np.save(d + '/good.npy', a)
b = open(d + '/good.npy', 'rb').read()
open(d + '/short.npy', 'wb').write(b[:-3])
open(d + '/long.npy', 'wb').write(b + b'\0')
open(d + '/cut.npy', 'wb').write(b[:20])
open(d + '/v4.npy', 'wb').write(b[:6] + bytes([4]) + b[7:])
open(d + '/magic.npy', 'wb').write(b'PK\x03\x04 not an array')
)"),
            "");
  const auto err = [&](const std::string& name) { return usageErrorOf([&] { headerOf(dir.file(name)); }); };
  const auto f = [&](const std::string& name) { return dir.file(name) + ": "; };
  EXPECT_EQ(err("fortran.npy"),
            f("fortran.npy") + "the array is in Fortran order; save it with np.save(path, np.ascontiguousarray(a))");
  EXPECT_EQ(err("big.npy"), f("big.npy") + "big-endian dtype '>f4'; save it with a.astype(a.dtype.newbyteorder('<'))");
  EXPECT_EQ(err("fields.npy"),
            f("fields.npy") + "bad .npy header: a structured dtype (a list of fields); save a plain numeric array");
  EXPECT_EQ(err("objects.npy"), f("objects.npy") + "bad .npy header: unsupported dtype '|O'");
  EXPECT_EQ(err("short.npy"), f("short.npy") + "truncated: shape (2, 3) of f4 needs 24 bytes of data, the file has 21");
  EXPECT_EQ(err("long.npy"),
            f("long.npy") + "trailing bytes: shape (2, 3) of f4 needs 24 bytes of data, the file has 25");
  EXPECT_EQ(err("cut.npy"), f("cut.npy") + "truncated .npy header (118 bytes announced, 10 present)");
  EXPECT_EQ(err("v4.npy"), f("v4.npy") + ".npy format version 4.0 is not supported (1.0, 2.0, 3.0 are)");
  EXPECT_EQ(err("magic.npy"), f("magic.npy") + "not a .npy file (bad magic; write it with numpy.save)");
  EXPECT_EQ(err("missing.npy"), f("missing.npy") + "no such file");
  dir.writeRaw("empty.npy", {});
  EXPECT_EQ(err("empty.npy"), f("empty.npy") + "not a .npy file (bad magic; write it with numpy.save)");
}

}  // namespace
}  // namespace balancenet::data
