// MappedFile: a whole file mapped read-only into memory, unmapped when the object goes (npy, tokens).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace balancenet::data {

// The kernel pages the file in as it is read, so a dataset larger than RAM costs only what is touched.
class MappedFile {
 public:
  // Throws UsageError with one line naming `path` if it is missing, not a regular file or cannot be mapped.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  const uint8_t* data() const { return data_; }  // nullptr for an empty file
  size_t size() const { return size_; }

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace balancenet::data
