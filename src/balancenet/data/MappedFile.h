// MappedFile: a whole file mapped read-only into memory, unmapped when the object goes (npy, tokens).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace balancenet::data {

// The kernel pages the file in as it is read, so a dataset larger than RAM costs only what is touched. A file
// truncated while mapped raises SIGBUS where its lost pages are read: the process then ends with one line naming
// the file and exit 2, not a crash (a handler installed with the first mapping; other SIGBUS stay fatal).
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
  int watchSlot_ = -1;  // its entry in the SIGBUS handler's list (MappedFile.cpp), -1 for none
};

}  // namespace balancenet::data
