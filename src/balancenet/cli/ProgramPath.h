// ProgramPath: the file a launcher will exec for a name, found as execvp finds it, or one UsageError line.
#pragma once
#include <string>

namespace balancenet::cli {

// `name` with a '/' must be an executable file (made absolute); a bare name is looked up on PATH. `what`
// names it in the error ("--python", "program").
std::string findExecutable(const std::string& name, const std::string& what);

// --python: `given` as findExecutable finds it; empty: the Python balancenet was built for (its torch)
// when it is executable, else python3 on PATH.
std::string findPython(const std::string& given);

}  // namespace balancenet::cli
