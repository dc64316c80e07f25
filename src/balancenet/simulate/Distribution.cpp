// Distribution: parsing "law:p1,p2" and portable draws.
#include "balancenet/simulate/Distribution.h"

#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/ParseNumber.h"
#include "balancenet/core/PortableRandom.h"

namespace balancenet::simulate {

double Distribution::draw(std::mt19937_64& gen) const {
  switch (kind) {
    case Kind::Constant:
      return a;
    case Kind::Uniform:
      return a + (b - a) * uniform01(gen);
    case Kind::Normal:
      return a + b * standardNormal(gen);
    case Kind::LogNormal:
      return a * std::exp(b * standardNormal(gen));
  }
  return a;
}

double Distribution::mean() const {
  switch (kind) {
    case Kind::Constant:
      return a;
    case Kind::Uniform:
      return 0.5 * (a + b);
    case Kind::Normal:
      return a;
    case Kind::LogNormal:
      return a * std::exp(0.5 * b * b);
  }
  return a;
}

Distribution Distribution::parse(const std::string& text, const std::string& flag) {
  auto fail = [&](const std::string& why) {
    return UsageError(fmt::format("{} '{}': {} (laws: const:x, uniform:lo,hi, normal:mean,sd, lognormal:median,sigma)",
                                  flag, text, why));
  };
  const auto colon = text.find(':');
  const std::string name = text.substr(0, colon);
  std::vector<double> p;
  if (colon != std::string::npos) {
    size_t at = colon + 1;
    while (at <= text.size()) {
      const size_t comma = std::min(text.find(',', at), text.size());
      const std::string field = text.substr(at, comma - at);
      const auto v = parseFiniteNumber(field);
      if (!v) throw fail("'" + field + "' is not a number");
      p.push_back(*v);
      at = comma + 1;
    }
  }
  Distribution d;
  auto need = [&](size_t count) {
    if (p.size() != count) throw fail(fmt::format("{} takes {} parameter(s)", name, count));
  };
  if (name == "const") {
    need(1);
    d = {Kind::Constant, p[0], 0};
  } else if (name == "uniform") {
    need(2);
    if (!(p[0] <= p[1])) throw fail("needs lo <= hi");
    d = {Kind::Uniform, p[0], p[1]};
  } else if (name == "normal") {
    need(2);
    if (p[1] < 0) throw fail("needs sd >= 0");
    d = {Kind::Normal, p[0], p[1]};
  } else if (name == "lognormal") {
    need(2);
    if (p[0] <= 0 || p[1] < 0) throw fail("needs median > 0 and sigma >= 0");
    d = {Kind::LogNormal, p[0], p[1]};
  } else {
    throw fail("unknown law");
  }
  return d;
}

}  // namespace balancenet::simulate
