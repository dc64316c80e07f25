// NpyFile: the header of a NumPy .npy file (format versions 1.0, 2.0 and 3.0), parsed and checked.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace balancenet::data {

struct NpyHeader {
  std::string dtype;           // numpy's descr without the byte order: "f4", "u1", "i8", "i4", ...
  std::vector<int64_t> shape;  // () for a scalar
  int64_t itemBytes = 0;       // bytes per element
  size_t dataOffset = 0;       // where the array's bytes begin
  int64_t elements() const;    // product of shape
};

// Parses the header at the start of `bytes` (the file mapped or read whole: `size` bytes) and checks
// that the data that follows is exactly elements() * itemBytes bytes. Accepts little-endian (or
// byte-order-free) simple dtypes in C order. Throws UsageError with one line naming `path` for a bad
// magic, an unknown version, a malformed or truncated header, a big-endian or structured dtype, Fortran
// order (with the fix: np.ascontiguousarray), or data shorter or longer than the shape says.
NpyHeader parseNpyHeader(const uint8_t* bytes, size_t size, const std::string& path);

}  // namespace balancenet::data
