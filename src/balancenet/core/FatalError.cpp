// The handler may run while any lock is held (by the failing thread or another): it only try_locks its
// own, formats into a fixed buffer on its stack (no allocation) and uses write() and _exit().
#include "balancenet/core/FatalError.h"

#include <csignal>

#include <unistd.h>

#include <exception>
#include <mutex>
#include <utility>
#include <vector>

namespace balancenet {
namespace {

std::mutex gContextMutex;
// Innermost last; keyed by owner, since contexts on different threads need not end in order.
std::vector<std::pair<const FatalErrorContext*, std::string>>& contexts() {
  static std::vector<std::pair<const FatalErrorContext*, std::string>> stack;
  return stack;
}

// Appends `text` up to its first newline (torch's backtraces follow it) to the buffer, as room allows.
void append(char* buffer, size_t capacity, size_t& used, const char* text) {
  for (; *text && *text != '\n' && used + 1 < capacity; ++text) buffer[used++] = *text;
}

[[noreturn]] void onTerminate() {
  // Formatted into a fixed buffer on the stack: the handler exists for failures such as std::bad_alloc,
  // where an allocation here would throw again and abort with a core dump instead of the one line.
  char line[1024];
  size_t used = 0;
  append(line, sizeof line, used, "balancenet: error: ");
  bool named = false;
  if (gContextMutex.try_lock()) {
    if (!contexts().empty()) {
      append(line, sizeof line, used, contexts().back().second.c_str());
      named = true;
    }
    gContextMutex.unlock();
  }
  if (!named) append(line, sizeof line, used, "unexpected failure");
  append(line, sizeof line, used, ": ");
  const char* what = "unknown error";
  if (auto error = std::current_exception()) {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
  }
  append(line, sizeof line, used, what);
  line[used++] = '\n';  // append leaves room for it
  [[maybe_unused]] auto written = ::write(STDERR_FILENO, line, used);
  ::_exit(1);
}

}  // namespace

void installFatalErrorHandler() { std::set_terminate(onTerminate); }

void ignoreBrokenPipes() { std::signal(SIGPIPE, SIG_IGN); }

FatalErrorContext::FatalErrorContext(std::string what, std::string cause) {
  // Composed here, not in the handler, which must not allocate.
  std::string text = std::move(what) + " failed" + (cause.empty() ? "" : ": " + cause);
  std::lock_guard<std::mutex> lock(gContextMutex);
  contexts().emplace_back(this, std::move(text));
}

FatalErrorContext::~FatalErrorContext() {
  std::lock_guard<std::mutex> lock(gContextMutex);
  auto& all = contexts();
  for (auto it = all.begin(); it != all.end(); ++it)
    if (it->first == this) {
      all.erase(it);
      break;
    }
}

}  // namespace balancenet
