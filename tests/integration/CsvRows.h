// CsvRows: a run directory's CSV file as rows of cells named by its header, for tests that check columns.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "balancenet/report/RunResults.h"

namespace balancenet::testing {

using CsvRow = std::map<std::string, std::string>;

inline std::vector<CsvRow> readCsvRows(const std::string& path) {
  const auto lines = report::readCsv(path);
  std::vector<CsvRow> rows;
  for (size_t i = 1; i < lines.size(); ++i) {
    CsvRow row;
    for (size_t c = 0; c < lines[0].size() && c < lines[i].size(); ++c) row[lines[0][c]] = lines[i][c];
    rows.push_back(std::move(row));
  }
  return rows;
}

// The loss of each step of a run's steps.csv, in step order: rank 0's row (every rank records the global
// batch's loss).
inline std::vector<double> stepLosses(const std::string& stepsCsv) {
  std::map<long long, double> byStep;
  for (const auto& row : readCsvRows(stepsCsv))
    if (row.at("rank") == "0") byStep[std::stoll(row.at("step"))] = std::stod(row.at("loss"));
  std::vector<double> losses;
  for (const auto& [step, loss] : byStep) losses.push_back(loss);
  return losses;
}

// The run learned: every step's loss in steps.csv is finite, and the mean of the last quarter of the steps is
// below `fraction` of the first step's (an exit code of 0 says nothing of a run that diverged).
inline void expectLossFalls(const std::string& stepsCsv, double fraction) {
  const auto losses = stepLosses(stepsCsv);
  const std::string all = fmt::format("losses by step: {:.4g}", fmt::join(losses, ", "));
  ASSERT_GE(losses.size(), 4u) << stepsCsv << ": " << all;
  for (const double loss : losses) ASSERT_TRUE(std::isfinite(loss)) << "diverged; " << all;
  const size_t tail = losses.size() / 4;
  double mean = 0;
  for (size_t i = losses.size() - tail; i < losses.size(); ++i) mean += losses[i] / static_cast<double>(tail);
  EXPECT_LT(mean, fraction * losses.front()) << "the loss did not fall; " << all;
}

}  // namespace balancenet::testing
