// readJobTokenFile: the first line, trimmed, of a file private to its owner; anything else is one UsageError line.
#include "balancenet/comm/admission/JobTokenFile.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "testing/TempDir.h"
#include "testing/UsageErrors.h"

namespace balancenet::comm {
namespace {

using balancenet::testing::usageErrorOf;
using std::filesystem::perms;

class JobTokenFile : public ::testing::Test {
 protected:
  std::string write(const std::string& text, perms mode = perms::owner_read | perms::owner_write) {
    const std::string path = dir_.file("token");
    std::ofstream(path) << text;
    std::filesystem::permissions(path, mode);
    return path;
  }
  void expectRefused(const std::string& path, const std::string& fragment) {
    const auto message = usageErrorOf([&] { readJobTokenFile(path); });
    EXPECT_NE(message.find(fragment), std::string::npos) << "got: " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << "multi-line: " << message;
  }
  balancenet::testing::TempDir dir_;
};

TEST_F(JobTokenFile, TheTokenIsTheFirstLineTrimmed) {
  EXPECT_EQ(readJobTokenFile(write("  9f8e7d6c5b4a \r\nsecond line\n")), "9f8e7d6c5b4a");
  EXPECT_EQ(readJobTokenFile(write("no newline at the end")), "no newline at the end");
  EXPECT_EQ(readJobTokenFile(write("read-only\n", perms::owner_read)), "read-only");
}

TEST_F(JobTokenFile, AFileOthersMayUseIsRefusedAsSshRefusesAKey) {
  expectRefused(write("t\n", perms::owner_read | perms::owner_write | perms::group_read),
                "permissions 0640 are too open (the group or others may use it); a token file must be private to "
                "its owner: chmod 600 ");
  expectRefused(write("t\n", perms::owner_read | perms::others_read), "permissions 0404 are too open");
  expectRefused(write("t\n", perms::owner_read | perms::group_write), "permissions 0420 are too open");
}

TEST_F(JobTokenFile, MissingEmptyAndNonRegularFilesAreRefused) {
  expectRefused(dir_.file("none"), "--job-token-file " + dir_.file("none") + ": No such file or directory");
  expectRefused(write(""), ": its first line is empty (write the token there)");
  expectRefused(write(" \t\nthe token on line two\n"), ": its first line is empty");
  std::filesystem::create_directories(dir_.file("dir"));
  std::filesystem::permissions(dir_.file("dir"), perms::owner_all);
  expectRefused(dir_.file("dir"), "--job-token-file " + dir_.file("dir") + ": not a regular file");
}

}  // namespace
}  // namespace balancenet::comm
