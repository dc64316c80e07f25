// usageErrorOf: what a call says when it refuses bad input, for tests of the one-line messages.
#pragma once
#include <functional>
#include <string>

#include "balancenet/core/Error.h"

namespace balancenet::testing {

// The message of the UsageError `call` throws, or "<no UsageError>" when it throws none.
inline std::string usageErrorOf(const std::function<void()>& call) {
  try {
    call();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "<no UsageError>";
}

}  // namespace balancenet::testing
