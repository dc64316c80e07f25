// CsvRows: a run directory's CSV file as rows of cells named by its header, for tests that check columns.
#pragma once
#include <map>
#include <string>
#include <vector>

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

}  // namespace balancenet::testing
