// SIGKILL or SIGSTOP to oneself at a step boundary.
#include "balancenet/elastic/FaultInjection.h"

#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include <fmt/format.h>

#include "balancenet/core/EnvironmentVariables.h"
#include "balancenet/core/Error.h"

namespace balancenet::elastic {
namespace {

class SelfFault : public trainer::StepBoundary {
 public:
  SelfFault(int64_t step, int signal) : step_(step), signal_(signal) {}
  void afterStep(trainer::StepEngine& engine, int64_t) override {
    if (engine.stepsDone() == step_) ::raise(signal_);
  }

 private:
  int64_t step_;
  int signal_;
};

}  // namespace

std::unique_ptr<trainer::StepBoundary> faultFromEnvironment(int member) {
  const char* value = std::getenv(kFaultVar);
  if (!value) return nullptr;
  std::istringstream in(value);
  std::string item;
  while (std::getline(in, item, ';')) {
    int rank = 0;
    long long step = 0;
    char what[8] = {};
    if (std::sscanf(item.c_str(), "%d:%lld:%7s", &rank, &step, what) != 3 ||
        (std::string(what) != "kill" && std::string(what) != "stop"))
      throw UsageError(fmt::format("{}='{}': expected RANK:STEP:kill or RANK:STEP:stop", kFaultVar, item));
    if (rank == member) return std::make_unique<SelfFault>(step, std::string(what) == "kill" ? SIGKILL : SIGSTOP);
  }
  return nullptr;
}

}  // namespace balancenet::elastic
