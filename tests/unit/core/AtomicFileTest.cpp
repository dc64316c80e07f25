// Atomic writes: complete files or nothing, and failures that say where.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "balancenet/core/AtomicFile.h"
#include "balancenet/core/Error.h"
#include "testing/SyscallFaults.h"
#include "testing/TempDir.h"

namespace balancenet {
namespace {

TEST(AtomicFile, ReplacesContentsAndLeavesNoTemporary) {
  testing::TempDir dir;
  const auto path = dir.file("summary.json");
  writeFileAtomically(path, "first");
  writeFileAtomically(path, "second, longer");
  EXPECT_EQ(testing::readFile(path), "second, longer");
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir.path())) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST(AtomicFile, FailureKeepsTheOldFile) {
  testing::TempDir dir;
  EXPECT_THROW(writeFileAtomically(dir.file("missing/dir/x"), "data"), RuntimeFailure);
  ensureDirectory(dir.file("a/b"));
  EXPECT_TRUE(std::filesystem::is_directory(dir.file("a/b")));
  writeFileAtomically(dir.file("a/b/c"), "kept");
  EXPECT_THROW(ensureDirectory(dir.file("a/b/c")), UsageError);  // a file is in the way
  EXPECT_EQ(testing::readFile(dir.file("a/b/c")), "kept");
}

// A failed fsync closes the temporary's descriptor, removes the temporary and names fsync's own error.
TEST(AtomicFile, AFailedFlushLeaksNoDescriptorAndSaysWhy) {
  testing::TempDir dir;
  writeFileAtomically(dir.file("x"), "old");
  const int before = testing::openDescriptors();
  testing::failNext(testing::Syscall::Fsync, EIO);
  try {
    writeFileAtomically(dir.file("x"), "new");
    ADD_FAILURE() << "the write succeeded";
  } catch (const RuntimeFailure& e) {
    EXPECT_NE(std::string(e.what()).find("cannot flush " + dir.file("x") + ": " + std::strerror(EIO)),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(testing::openDescriptors(), before);
  EXPECT_EQ(testing::readFile(dir.file("x")), "old");
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir.path())) files += e.is_regular_file();
  EXPECT_EQ(files, 1) << "the temporary is removed";
}

}  // namespace
}  // namespace balancenet
