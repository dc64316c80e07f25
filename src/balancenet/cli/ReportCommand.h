// ReportCommand: `balancenet report`: one HTML page (tables and charts) for one or more run directories.
#pragma once
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace balancenet::cli {

struct ReportOptions {
  std::vector<std::string> runs;  // run directories, training or federated
  std::string out = "report.html";
};

// Declares the subcommand's flags on `app`, bound to `options`.
void addReportFlags(CLI::App& app, ReportOptions& options);
// Writes the page (report/HtmlReport.h) and says where; returns the exit code.
int runReport(const ReportOptions& options);

}  // namespace balancenet::cli
