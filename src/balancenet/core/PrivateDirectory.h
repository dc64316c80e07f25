// PrivateDirectory: a fresh directory only its owner can enter, removed with its contents when destroyed.
#pragma once
#include <string>

namespace balancenet {

class PrivateDirectory {
 public:
  // Under $TMPDIR (or /tmp), named <stem>-XXXXXX, mode 0700. Throws RuntimeFailure when it cannot be made.
  explicit PrivateDirectory(const std::string& stem);
  ~PrivateDirectory();
  PrivateDirectory(const PrivateDirectory&) = delete;
  PrivateDirectory& operator=(const PrivateDirectory&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace balancenet
