// The names of a field list, from the text the preprocessor made of it.
#include "balancenet/core/FieldList.h"

#include <cctype>

namespace balancenet {

std::vector<std::string> fieldNames(const char* list) {
  std::vector<std::string> names(1);
  for (const char* c = list; *c; ++c) {
    if (*c == ',')
      names.emplace_back();
    else if (!std::isspace(static_cast<unsigned char>(*c)))
      names.back() += *c;
  }
  return names;
}

}  // namespace balancenet
