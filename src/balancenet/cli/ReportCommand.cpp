// The report subcommand's flags, and the page written through report/.
#include "balancenet/cli/ReportCommand.h"

#include <iostream>

#include <CLI/CLI.hpp>

#include "balancenet/report/HtmlReport.h"

namespace balancenet::cli {

void addReportFlags(CLI::App& app, ReportOptions& options) {
  app.add_option("runs", options.runs,
                 "Run directories (training: summary.json and steps.csv; federated: summary.json and rounds.csv)")
      ->required();
  app.add_option("-o,--out", options.out, "The page to write (self-contained: open it in any browser)")
      ->capture_default_str();
}

int runReport(const ReportOptions& options) {
  report::writeHtmlReport(options.runs, options.out);
  std::cerr << "balancenet: report written to " << options.out << std::endl;
  return 0;
}

}  // namespace balancenet::cli
