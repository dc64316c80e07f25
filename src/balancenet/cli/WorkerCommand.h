// WorkerCommand: `balancenet worker`, what balancenet's launcher starts on its host: a worker of train or
// federate, or a parameter server, that reads its job from the launcher (BALANCENET_JOB_CONFIG, resolved once
// there: job/JobConfigJson.h) and who it is from its environment (RANK, ..., BALANCENET_PS_SERVER). It parses
// no flags; not listed under --help, since a user starts workers with train, federate or a scheduler.
#pragma once

namespace balancenet::cli {

inline constexpr const char* kWorkerCommand = "worker";

// Runs this process as the launcher said. Its exit code; UsageError when nothing launched it.
int runLaunchedProcess();

}  // namespace balancenet::cli
