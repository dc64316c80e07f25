// RunOutputs: the files of a run directory. Every way of training writes through writeRunFile; the step
// engines' run loop gathers every rank's step records to rank 0, which writes steps.csv and summary.json.
#pragma once
#include <string>
#include <vector>

#include "balancenet/comm/group/Collectives.h"
#include "balancenet/core/Timeline.h"
#include "balancenet/metrics/Efficiency.h"
#include "balancenet/metrics/RunSummary.h"
#include "balancenet/metrics/StepRecord.h"

namespace balancenet::trainer {

// Writes `runDir`/`name` atomically, making the directory first; nothing when `runDir` is empty. Rank 0
// (or the one process that writes) calls it.
void writeRunFile(const std::string& runDir, const std::string& name, const std::string& contents);

// Collective: every rank calls it (records may differ in number). Fills the summary's step-derived
// fields (mean and per-100 weight-update time, and "workers": each rank's achieved FLOP/s against its
// peak; each rank's peak resident memory) on every rank, and returns the per-rank efficiency; rank 0 writes
// the files atomically.
std::vector<metrics::WorkerEfficiency> writeRunOutputs(comm::Collectives& comm,
                                                       const std::vector<metrics::StepRecord>& mine,
                                                       metrics::RunSummary& summary, const std::string& runDir,
                                                       const metrics::WorkerCapacity& capacity = {});

// Collective. Rank 0 writes layers.csv (step,rank,layer,method,bytes_sent,bytes_received) from every
// rank's rows; nothing is written when no rank has any (strategies without a per-layer breakdown).
void writeLayerTraffic(comm::Collectives& comm, const std::string& myRows, const std::string& runDir);

// Collective. Rank 0 writes one Chrome trace with every rank's events (one process per rank).
void writeTimeline(comm::Collectives& comm, const Timeline& timeline, const std::string& path);

}  // namespace balancenet::trainer
