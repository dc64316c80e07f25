// TempDir: a fresh directory under /tmp for one test, removed with everything in it afterwards.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <zlib.h>

namespace balancenet::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern = "/tmp/balancenet-test-XXXXXX";
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

  // Writes raw bytes, gzip-compressed if `gzip`: for files writeIdx would refuse to produce.
  std::string writeRaw(const std::string& name, const std::vector<uint8_t>& bytes, bool gzip = false) const {
    const std::string p = file(name);
    std::filesystem::create_directories(std::filesystem::path(p).parent_path());
    if (gzip) {
      gzFile f = gzopen(p.c_str(), "wb");
      if (!f || (!bytes.empty() && gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) <= 0))
        throw std::runtime_error("cannot write " + p);
      gzclose(f);
    } else {
      std::ofstream out(p, std::ios::binary);
      out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
      if (!out) throw std::runtime_error("cannot write " + p);
    }
    return p;
  }

  std::vector<uint8_t> readRaw(const std::string& name) const {
    std::ifstream in(file(name), std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

 private:
  std::string path_;
};

// A whole file as a string (empty if it cannot be read).
inline std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace balancenet::testing
