// Reading run directories back (for compare and reports).
#include "balancenet/report/RunResults.h"

#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::report {
namespace {

// A CSV file as rows of fields, header first; our files never quote.
std::vector<std::vector<std::string>> readCsv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("{}: cannot be read", path));
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream ls(line);
    std::string f;
    while (std::getline(ls, f, ',')) fields.push_back(f);
    rows.push_back(fields);
  }
  if (rows.empty()) throw UsageError(fmt::format("{}: empty", path));
  return rows;
}

int column(const std::vector<std::string>& header, const std::string& name, const std::string& path) {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  throw UsageError(fmt::format("{}: no column '{}'", path, name));
}

}  // namespace

double RunResults::secondsToAccuracy(double target) const {
  if (!summary.contains("evaluations")) return -1;
  for (const auto& e : summary["evaluations"])
    if (e["accuracy"].get<double>() >= target) return e.value("train_seconds", -1.0);
  return -1;
}

RunResults loadRun(const std::string& dir) {
  RunResults r;
  r.dir = dir;
  const std::string summaryPath = dir + "/summary.json";
  std::ifstream in(summaryPath);
  if (!in) throw UsageError(fmt::format("{}: cannot be read", summaryPath));
  try {
    r.summary = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("{}: not valid JSON", summaryPath));
  }

  const std::string stepsPath = dir + "/steps.csv";
  auto steps = readCsv(stepsPath);
  const int stepCol = column(steps[0], "step", stepsPath), updateCol = column(steps[0], "update_ms", stepsPath);
  std::map<int64_t, double> slowest;
  for (size_t i = 1; i < steps.size(); ++i) {
    auto& v = slowest[std::stoll(steps[i].at(stepCol))];
    v = std::max(v, std::stod(steps[i].at(updateCol)));
  }
  for (const auto& [step, ms] : slowest) r.updateMsPerStep.push_back(ms);

  const std::string splitsPath = dir + "/splits.csv";
  if (std::ifstream(splitsPath)) {
    auto rows = readCsv(splitsPath);
    const int s = column(rows[0], "step", splitsPath), rank = column(rows[0], "rank", splitsPath),
              batch = column(rows[0], "batch", splitsPath);
    for (size_t i = 1; i < rows.size(); ++i) {
      const int64_t step = std::stoll(rows[i].at(s));
      const int rk = std::stoi(rows[i].at(rank));
      if (r.splits.empty() || r.splits.back().step != step || rk == 0) r.splits.push_back({step, {}});
      r.splits.back().batches.push_back(std::stoll(rows[i].at(batch)));
    }
  }
  return r;
}

}  // namespace balancenet::report
