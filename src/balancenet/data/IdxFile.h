// IdxFile: reading and writing unsigned-byte IDX files (the MNIST format), plain or gzip-compressed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace balancenet::data {

// An n-dimensional array of bytes, row-major: data.size() == product of dims.
struct IdxArray {
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;
};

// Reads an IDX file of unsigned bytes with exactly `expectedRank` dims (1 = MNIST labels, 3 = MNIST
// images). Gzip is detected from the content, not the name. Any defect (missing file, bad magic, wrong
// element type or rank, a zero dim, a truncated payload, trailing bytes) throws UsageError with one line
// naming the file.
IdxArray readIdx(const std::string& path, int expectedRank);

// Writes `array` as an unsigned-byte IDX file, gzip-compressed if `gzip`. Throws UsageError if the array
// is inconsistent (data size != product of dims, a dim <= 0 or >= 2^32) or the file cannot be written.
void writeIdx(const std::string& path, const IdxArray& array, bool gzip);

}  // namespace balancenet::data
