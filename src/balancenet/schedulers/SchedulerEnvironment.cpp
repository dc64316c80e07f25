// The precedence among launchers' environments.
#include "balancenet/schedulers/SchedulerEnvironment.h"

#include "balancenet/schedulers/Launchers.h"

namespace balancenet::schedulers {
namespace {

struct Launcher {
  const char* name;
  std::optional<SchedulerReading> (*read)(const Environment&);
};

const std::vector<Launcher>& launchers() {
  static const std::vector<Launcher> order{{"torchrun", readTorchrun},
                                           {"openmpi", readOpenMpi},
                                           {"mpich", readMpich},
                                           {"slurm", readSlurm},
                                           {"kubernetes", readKubernetes}};
  return order;
}

}  // namespace

const std::vector<std::string>& schedulerPrecedence() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& l : launchers()) n.push_back(l.name);
    return n;
  }();
  return names;
}

std::optional<SchedulerReading> readSchedulerEnvironment(const Environment& env) {
  for (const auto& l : launchers())
    if (auto reading = l.read(env)) return reading;
  return std::nullopt;
}

}  // namespace balancenet::schedulers
