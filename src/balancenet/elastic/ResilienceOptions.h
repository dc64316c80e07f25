// ResilienceOptions: how a job survives what shared clusters do (see docs/reliability.md). Part of
// job/JobConfig.h.
#pragma once
#include <chrono>
#include "balancenet/core/FieldList.h"

namespace balancenet::elastic {

struct ResilienceOptions {
  bool elastic = false;                          // --elastic: a dead worker is dropped and training goes on
  int minNodes = 1;                              // --min-nodes: fewer survivors stop the job
  int maxNodes = 0;                              // --max-nodes: joiners beyond it wait (0: the launched world)
  std::chrono::milliseconds peerTimeout{30000};  // --peer-timeout: a collective's wait under --elastic
  std::chrono::milliseconds stallTimeout{0};     // --stall-timeout: a collective's wait otherwise (0: rendezvous)
  int maxRestarts = 0;  // --max-restarts: the launcher starts a dead worker again (it rejoins), this often
  bool join = false;    // --join: this process joins a running elastic job as a new worker

  // The fields a launcher sends its workers (core/FieldList.h): every one.
  BALANCENET_FIELDS(elastic, minNodes, maxNodes, peerTimeout, stallTimeout, maxRestarts, join);
};
BALANCENET_CHECK_FIELDS(ResilienceOptions);

}  // namespace balancenet::elastic
