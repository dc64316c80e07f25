// Error types: every failure a user can cause ends as one clear line and a non-zero exit.
#pragma once
#include <stdexcept>
#include <string>

namespace balancenet {

// A problem with what the user gave us (flags, config, data files, checkpoints). Exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A problem of the running job: peers, network, a dead worker. Exit code 1.
class RuntimeFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A broken invariant of the program itself (a policy returned an impossible split, ...): a bug, never the
// user's input. Exit code 1; the message says it is a bug so that it is reported, not "fixed" by changing flags.
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& what)
      : std::logic_error("internal error (a bug; please report it): " + what) {}
};

// The one-line check of user input: a UsageError with `message` unless `ok`.
inline void require(bool ok, const std::string& message) {
  if (!ok) throw UsageError(message);
}

// torch/c10 errors carry a multi-line C++ backtrace; users get the first line only.
std::string firstLine(const std::string& message);

}  // namespace balancenet
