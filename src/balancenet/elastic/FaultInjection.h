// FaultInjection: a worker that kills or stops itself after a given step, for deterministic fault
// tests. Set by the hidden variable BALANCENET_FAULT="<rank>:<step>:kill|stop" (several separated by ';').
#pragma once
#include <memory>

#include "balancenet/trainer/StepEngine.h"

namespace balancenet::elastic {

// The boundary that injects this member's fault, or null when the variable names none for it.
// Throws UsageError on a malformed value.
std::unique_ptr<trainer::StepBoundary> faultFromEnvironment(int member);

}  // namespace balancenet::elastic
