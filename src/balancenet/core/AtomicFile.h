// Atomic file writes: readers see the old file or the whole new one, never a half-written one.
#pragma once
#include <string>

namespace balancenet {

// Writes to "<path>.tmp.<pid>", fsyncs, renames over path, fsyncs the directory. Throws RuntimeFailure.
void writeFileAtomically(const std::string& path, const std::string& contents);

// Creates the directory and its parents; throws UsageError naming the path when impossible.
void ensureDirectory(const std::string& path);

}  // namespace balancenet
