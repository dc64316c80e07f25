// JobTokenFile: a job token kept in a file (--job-token-file), so that it never shows on a command line.
#pragma once
#include <string>

namespace balancenet::comm {

// The token in `path`: its first line, without surrounding white space. A file that is missing, not a regular
// file, unreadable, empty, or open to the group or to others (any of the mode bits 077, as ssh refuses a
// private key) is a UsageError naming the file and what to do.
std::string readJobTokenFile(const std::string& path);

}  // namespace balancenet::comm
