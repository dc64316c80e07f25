// Expanding Slurm's host lists and tasks-per-node lists, with one-line errors for malformed ones.
#include "balancenet/schedulers/HostList.h"

#include <cctype>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/ParseNumber.h"

namespace balancenet::schedulers {
namespace {

// Slurm caps a list's expansion too; a typo like node[1-999999999] must not allocate the machine away.
constexpr size_t kMaxHosts = 1 << 20;

[[noreturn]] void malformed(const std::string& variable, const std::string& text, const std::string& why) {
  throw UsageError(fmt::format("environment variable {}='{}' is not a Slurm list: {}", variable, text, why));
}

bool allDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char ch : s)
    if (!std::isdigit(static_cast<unsigned char>(ch))) return false;
  return true;
}

// Splits at commas outside brackets.
std::vector<std::string> topLevelItems(const std::string& text, const std::string& variable) {
  std::vector<std::string> items;
  std::string current;
  int depth = 0;
  for (char ch : text) {
    if (ch == '[') ++depth;
    if (ch == ']') --depth;
    if (depth < 0 || depth > 1) malformed(variable, text, "unbalanced brackets");
    if (ch == ',' && depth == 0) {
      items.push_back(current);
      current.clear();
    } else {
      current += ch;
    }
  }
  if (depth != 0) malformed(variable, text, "unbalanced brackets");
  items.push_back(current);
  for (const auto& item : items)
    if (item.empty()) malformed(variable, text, "an empty name");
  return items;
}

// "01-04,07" -> 01 02 03 04 07 (each zero-padded to its range's lower bound).
std::vector<std::string> expandBracket(const std::string& inside, const std::string& variable,
                                       const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= inside.size()) {
    const size_t comma = std::min(inside.find(',', start), inside.size());
    const std::string range = inside.substr(start, comma - start);
    const size_t dash = range.find('-');
    const std::string low = range.substr(0, dash);
    const std::string high = dash == std::string::npos ? low : range.substr(dash + 1);
    if (!allDigits(low) || !allDigits(high)) malformed(variable, text, fmt::format("'[{}]' is not a range", inside));
    const auto a = parseInteger<int64_t>(low), b = parseInteger<int64_t>(high);
    if (!a || !b || *a > *b) malformed(variable, text, fmt::format("'{}' is not an increasing range", range));
    if (static_cast<size_t>(*b - *a) >= kMaxHosts) malformed(variable, text, "too many hosts");
    for (int64_t v = *a; v <= *b; ++v) out.push_back(fmt::format("{:0{}}", v, low.size()));
    start = comma + 1;
  }
  return out;
}

// One name with any number of bracket groups: the product of its groups, left to right.
void expandName(const std::string& name, const std::string& variable, const std::string& text,
                std::vector<std::string>& hosts) {
  std::vector<std::string> prefixes{""};
  size_t pos = 0;
  while (pos < name.size()) {
    const size_t open = name.find('[', pos);
    const std::string literal = name.substr(pos, open - pos);
    for (auto& p : prefixes) p += literal;
    if (open == std::string::npos) break;
    const size_t close = name.find(']', open);
    std::vector<std::string> next;
    for (const auto& p : prefixes)
      for (const auto& v : expandBracket(name.substr(open + 1, close - open - 1), variable, text)) {
        if (next.size() + hosts.size() >= kMaxHosts) malformed(variable, text, "too many hosts");
        next.push_back(p + v);
      }
    prefixes = std::move(next);
    pos = close + 1;
  }
  hosts.insert(hosts.end(), prefixes.begin(), prefixes.end());
}

}  // namespace

std::vector<std::string> expandHostList(const std::string& text, const std::string& variable) {
  if (text.empty()) malformed(variable, text, "it is empty");
  std::vector<std::string> hosts;
  for (const auto& item : topLevelItems(text, variable)) expandName(item, variable, text, hosts);
  return hosts;
}

std::vector<int> expandTasksPerNode(const std::string& text, const std::string& variable) {
  if (text.empty()) malformed(variable, text, "it is empty");
  std::vector<int> tasks;
  for (const auto& item : topLevelItems(text, variable)) {
    const size_t paren = item.find("(x");
    const std::string count = item.substr(0, paren);
    std::string times = "1";
    if (paren != std::string::npos) {
      if (item.back() != ')') malformed(variable, text, fmt::format("'{}' is not N or N(xK)", item));
      times = item.substr(paren + 2, item.size() - paren - 3);
    }
    const auto n = allDigits(count) ? parseInteger<int>(count) : std::nullopt;
    const auto k = allDigits(times) ? parseInteger<int>(times) : std::nullopt;
    if (!n || !k || *n < 1 || *k < 1) malformed(variable, text, fmt::format("'{}' is not N or N(xK)", item));
    if (tasks.size() + *k > kMaxHosts) malformed(variable, text, "too many nodes");
    tasks.insert(tasks.end(), *k, *n);
  }
  return tasks;
}

}  // namespace balancenet::schedulers
