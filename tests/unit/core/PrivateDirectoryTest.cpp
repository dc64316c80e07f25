// PrivateDirectory: made for its owner only, under TMPDIR, gone with everything in it afterwards.
#include "balancenet/core/PrivateDirectory.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "testing/TempDir.h"

namespace balancenet {
namespace {

TEST(PrivateDirectory, OnlyItsOwnerMayEnterAndItIsRemovedWithItsFiles) {
  testing::TempDir tmp;
  const char* before = std::getenv("TMPDIR");
  const std::string saved = before ? before : "";
  ::setenv("TMPDIR", tmp.path().c_str(), 1);
  std::string path;
  {
    PrivateDirectory dir("balancenet-store");
    path = dir.path();
    EXPECT_EQ(path.rfind(tmp.path() + "/balancenet-store-", 0), 0u) << path;
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    std::ofstream(dir.file("store")) << "keys";
    EXPECT_TRUE(std::filesystem::exists(dir.file("store")));
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  if (before)
    ::setenv("TMPDIR", saved.c_str(), 1);
  else
    ::unsetenv("TMPDIR");
}

}  // namespace
}  // namespace balancenet
