// HtmlReport: `balancenet report <run-dir>...`: one static HTML page a browser opens without a server.
#pragma once
#include <string>
#include <vector>

#include "balancenet/report/FederatedResults.h"
#include "balancenet/report/RunResults.h"

namespace balancenet::report {

// The page for these runs: a summary table, the paper's per-100 table, each rank's mean compute /
// communication / waiting time (numbers and bars), and charts (throughput and weight-update time
// over training, the split over time; a pipelined run's schedule with its bubble per rank) rendered with
// gnuplot into `chartDir` and embedded as data URIs, so the page is one self-contained file. Without
// gnuplot the page has the tables only.
// Federated runs (`balancenet federate`) get their own table (time and rounds to 70/80/85%, bytes, client
// idle share), test accuracy against wall time, and each run's local steps per client and round. Either
// list may be empty; a page may mix both kinds.
std::string htmlReport(const std::vector<RunResults>& runs, const std::string& chartDir,
                       const std::vector<FederatedResults>& federated = {});

// Loads the run directories (training or federated, told apart by summary.json's "kind") and writes the
// page to `outPath` atomically; a pipelined run's picture is also kept as pipeline.png in its directory.
void writeHtmlReport(const std::vector<std::string>& runDirs, const std::string& outPath);

}  // namespace balancenet::report
