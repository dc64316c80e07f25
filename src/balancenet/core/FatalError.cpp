// The handler may run while any lock is held (by the failing thread or another): it only try_locks its
// own, formats into a local buffer and uses write() and _exit().
#include "balancenet/core/FatalError.h"

#include <unistd.h>

#include <exception>
#include <mutex>
#include <utility>
#include <vector>

#include "balancenet/core/Error.h"

namespace balancenet {
namespace {

std::mutex gContextMutex;
// Innermost last; keyed by owner, since contexts on different threads need not end in order.
std::vector<std::pair<const FatalErrorContext*, std::string>>& contexts() {
  static std::vector<std::pair<const FatalErrorContext*, std::string>> stack;
  return stack;
}

[[noreturn]] void onTerminate() {
  std::string what = "unknown error";
  if (auto error = std::current_exception()) {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      what = firstLine(e.what());
    } catch (...) {
    }
  }
  std::string context = "unexpected failure";
  if (gContextMutex.try_lock()) {
    if (!contexts().empty()) context = contexts().back().second + " failed";
    gContextMutex.unlock();
  }
  const std::string line = "balancenet: error: " + context + ": " + what + "\n";
  [[maybe_unused]] auto written = ::write(STDERR_FILENO, line.data(), line.size());
  ::_exit(1);
}

}  // namespace

void installFatalErrorHandler() { std::set_terminate(onTerminate); }

FatalErrorContext::FatalErrorContext(std::string what) {
  std::lock_guard<std::mutex> lock(gContextMutex);
  contexts().emplace_back(this, std::move(what));
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
