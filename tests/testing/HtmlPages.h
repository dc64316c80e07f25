// What the report tests read from a generated HTML page.
#pragma once
#include <cstddef>
#include <string>

namespace balancenet::testing {

// The charts embedded in the page (PNG data URIs).
inline size_t embeddedImages(const std::string& page) {
  size_t n = 0;
  for (size_t pos = 0; (pos = page.find("data:image/png;base64,", pos)) != std::string::npos; ++pos) ++n;
  return n;
}

}  // namespace balancenet::testing
