// FatalError: the last line of defence for the one-line error rule, when an exception escapes a thread
// that is not ours (c10d's store client reads its server's replies on a background thread, and a
// length it cannot allocate there would otherwise abort the process with a core dump).
#pragma once
#include <string>

namespace balancenet {

// std::terminate then prints "balancenet: error: <what> failed[: <cause>]: <exception>" (the innermost
// FatalErrorContext, if any) and exits with code 1. Installed once by the program's entry point.
void installFatalErrorHandler();

// SIGPIPE ignored in the whole process: a peer that died closes its sockets, and writing to one (Gloo's pairs write
// with writev, which raises SIGPIPE; so do c10d's store clients) must be an error the caller handles (elastic
// recovery, the line naming the peer), not a signal that kills the process without a word. Python ignores it
// already; a C++ process does not. Called by the program's entry point and wherever a Gloo group is made, so that
// every process using the library (tests, an embedding program) has it.
void ignoreBrokenPipes();

// Names what the process is doing while it lives, for that line ("the rendezvous of rank 1 at ..."), and
// what an exception on a foreign thread then means, when the context knows (`cause`: "the job's store at
// ... stopped answering", since c10d's store client is the only foreign thread that throws during set-up).
class FatalErrorContext {
 public:
  explicit FatalErrorContext(std::string what, std::string cause = {});
  ~FatalErrorContext();
  FatalErrorContext(const FatalErrorContext&) = delete;
  FatalErrorContext& operator=(const FatalErrorContext&) = delete;
};

}  // namespace balancenet
