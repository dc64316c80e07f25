// DataOptions: where computed dataset statistics are kept between runs.
#include "balancenet/data/DataOptions.h"

#include <cstdlib>

namespace balancenet::data {

std::string defaultCacheDir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/balancenet";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/balancenet";
  return {};
}

}  // namespace balancenet::data
