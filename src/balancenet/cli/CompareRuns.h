// CompareRuns: what `balancenet compare` does for every run it makes, training or federated: variants of the
// command line, run labels, running this program once per run, the output directory.
#pragma once
#include <string>
#include <vector>

namespace balancenet::cli {

// --variant NAME=FLAGS: one more run per compared item with FLAGS added, labelled NAME.
struct Variant {
  std::string name;
  std::vector<std::string> flags;
};

// No specs: one unnamed variant with no flags. UsageError for a spec that is not NAME=FLAGS.
std::vector<Variant> parseVariants(const std::vector<std::string>& specs);

// A run's label (and directory name): the item (policy, strategy), the variant's name, or both joined by '-'
// when there are several items and a named variant.
std::string runLabel(const std::string& item, const Variant& variant, size_t items);

// Runs this program with `args`, output to `logPath`; returns its exit code (128 + signal if killed).
int runSelf(const std::string& self, const std::vector<std::string>& args, const std::string& logPath);

// runSelf, and on a non-zero exit a newline on stderr (ending the caller's progress line) and RuntimeFailure
// "<what> failed (exit N): <the log's last line> (log: <logPath>)".
void runCompared(const std::string& self, const std::vector<std::string>& args, const std::string& logPath,
                 const std::string& what);

// Whether `flags` hold --name (alone or as --name=value).
bool hasFlag(const std::vector<std::string>& flags, const std::string& name);

// The last non-empty line of a log (the error line of a run that failed).
std::string lastLine(const std::string& path);

// runs/compare-<local time>, where compare writes unless --out says otherwise.
std::string defaultCompareOutDir();

}  // namespace balancenet::cli
