// ProgramPath: the file a launcher will exec for a name, found as execvp finds it, or one UsageError line; whether
// `balancenet launch PROGRAM` hands PROGRAM to Python or runs it as it is.
#pragma once
#include <string>

namespace balancenet::cli {

// `name` with a '/' must be an executable file (made absolute); a bare name is looked up on PATH. `what`
// names it in the error ("--python", "program").
std::string findExecutable(const std::string& name, const std::string& what);

// --python: `given` as findExecutable finds it; empty: the Python balancenet was built for (its torch)
// when it is executable, else python3 on PATH.
std::string findPython(const std::string& given);

// How `balancenet launch` runs PROGRAM when --no-python is not given.
enum class ProgramKind {
  PythonScript,  // a file that is not a program of its own: the job's Python runs it
  Executable,    // an executable native (ELF) binary or non-Python #! script, or a name that is no file here but a
                 // command on PATH: run as it is
};

// What `word` (PROGRAM's first word) is. `launch --workers 2 python3 train.py` (the mpirun habit) runs the user's
// python3 on train.py, not the job's Python on the python3 binary. Neither a file nor on PATH: one UsageError line.
ProgramKind programKind(const std::string& word);

}  // namespace balancenet::cli
