// programKind: which PROGRAM words of `balancenet launch` go to the job's Python and which run as they are.
#include "balancenet/cli/ProgramPath.h"

#include <sys/stat.h>

#include <fstream>

#include <gtest/gtest.h>

#include "testing/TempDir.h"
#include "testing/UsageErrors.h"

namespace balancenet::cli {
namespace {

std::string writeProgramFile(const std::string& path, const std::string& text, bool executable) {
  std::ofstream(path) << text;
  ::chmod(path.c_str(), executable ? 0755 : 0644);
  return path;
}

TEST(ProgramKind, PythonScriptsGoToPythonWithOrWithoutTheirOwnInterpreterLine) {
  testing::TempDir dir;
  EXPECT_EQ(programKind(writeProgramFile(dir.file("train.py"), "print(1)\n", false)), ProgramKind::PythonScript);
  EXPECT_EQ(programKind(writeProgramFile(dir.file("train"), "#!/usr/bin/env python3\nprint(1)\n", true)),
            ProgramKind::PythonScript);
  // Not executable: whatever its first line, only Python can run it.
  EXPECT_EQ(programKind(writeProgramFile(dir.file("run.sh"), "#!/bin/sh\necho 1\n", false)), ProgramKind::PythonScript);
}

TEST(ProgramKind, NativeBinariesShellScriptsAndCommandsOnPathRunAsTheyAre) {
  testing::TempDir dir;
  // The mpirun habit, `launch --workers 2 python3 train.py`: python3 is the program, not a script.
  EXPECT_EQ(programKind("python3"), ProgramKind::Executable);
  EXPECT_EQ(programKind(BALANCENET_PYTHON_EXE), ProgramKind::Executable);  // a path to an ELF binary
  EXPECT_EQ(programKind(writeProgramFile(dir.file("run.sh"), "#!/bin/sh\necho 1\n", true)), ProgramKind::Executable);
}

TEST(ProgramKind, NeitherAFileNorACommandIsOneLine) {
  testing::TempDir dir;
  testing::expectOneLineUsageError([&] { programKind(dir.file("missing.py")); }, "missing.py: no such file");
  testing::expectOneLineUsageError([] { programKind("no-such-command-here"); }, "no-such-command-here: no such file");
}

}  // namespace
}  // namespace balancenet::cli
