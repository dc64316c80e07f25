// PipelineChart: one step of pipeline.csv as a picture: a lane per rank, a box per forward or backward.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "balancenet/report/PipelineTrace.h"

namespace balancenet::report {

struct PipelineChartOptions {
  int64_t step = -1;     // the step drawn; < 0: the last step present
  std::string schedule;  // "gpipe", "1f1b": named in the title when given
};

// Writes pngPath (and its data and script beside it) with gnuplot: one horizontal lane per rank, labelled
// "stage s" (or "stage s / replica j" when a stage has replicas), stage 0 on top; a box per action from its
// start to its end, forwards and backwards in two colours, the micro-batch number in each box wide enough
// to hold it; x in ms from the step's first action. UsageError when the step has no action; false, with a
// warning logged, when gnuplot is missing or fails (pictures are optional).
bool renderPipelineChart(const std::vector<PipelineAction>& actions, const std::string& pngPath,
                         const PipelineChartOptions& options = {});

}  // namespace balancenet::report
