// usageErrorOf: what a call says when it refuses bad input, for tests of the one-line messages.
#pragma once
#include <functional>
#include <string>

#include <gtest/gtest.h>

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

// Expects `call` to refuse with one line that names `fragment`.
inline void expectOneLineUsageError(const std::function<void()>& call, const std::string& fragment) {
  const auto message = usageErrorOf(call);
  EXPECT_NE(message.find(fragment), std::string::npos) << "got: " << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "multi-line: " << message;
}

}  // namespace balancenet::testing
