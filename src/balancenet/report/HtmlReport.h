// HtmlReport: `balancenet report <run-dir>...`: one static HTML page a browser opens without a server.
#pragma once
#include <string>
#include <vector>

#include "balancenet/report/RunResults.h"

namespace balancenet::report {

// The page for these runs: a summary table, the paper's per-100 table, each rank's mean compute /
// communication / waiting time (numbers and bars), and charts (throughput and weight-update time
// over training, the split over time; a pipelined run's schedule with its bubble per rank) rendered with
// gnuplot into `chartDir` and embedded as data URIs, so the page is one self-contained file. Without
// gnuplot the page has the tables only.
std::string htmlReport(const std::vector<RunResults>& runs, const std::string& chartDir);

// Loads the run directories and writes the page to `outPath` atomically; a pipelined run's picture is
// also kept as pipeline.png in its directory.
void writeHtmlReport(const std::vector<std::string>& runDirs, const std::string& outPath);

}  // namespace balancenet::report
