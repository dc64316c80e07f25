// MappedFile: a file truncated under its mapping (a token or npy file rewritten during a run) ends the process with
// one line naming it and exit 2, where reading its lost pages raised SIGBUS and killed the worker without a word.
#include "balancenet/data/MappedFile.h"

#include <unistd.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "testing/TempDir.h"

namespace balancenet::data {
namespace {

int readAfterTruncation(const std::string& path) {
  MappedFile mapped(path);
  if (::truncate(path.c_str(), 0) != 0) return -1;
  volatile uint8_t last = mapped.data()[mapped.size() - 1];  // its page is gone: SIGBUS
  return last;
}

TEST(MappedFileDeathTest, AFileTruncatedWhileMappedIsOneLineAndExit2) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // torch's thread pools may run: re-execute, not only fork
  testing::TempDir dir;
  const std::string path = dir.file("tokens.bin");
  std::ofstream(path, std::ios::binary) << std::string(3 * 4096, 'x');
  EXPECT_EXIT(readAfterTruncation(path), ::testing::ExitedWithCode(2),
              "^balancenet: error: .*tokens.bin: the file changed size while it was read \\(truncated or rewritten "
              "during the run\\)\n$");
}

TEST(MappedFile, AnIntactFileReadsAsWritten) {
  testing::TempDir dir;
  const std::string path = dir.file("tokens.bin");
  std::ofstream(path, std::ios::binary) << "abc";
  MappedFile mapped(path);
  ASSERT_EQ(mapped.size(), 3u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(mapped.data()), 3), "abc");
}

}  // namespace
}  // namespace balancenet::data
