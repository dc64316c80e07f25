// Reading federated run directories back, and their table.
#include "balancenet/report/FederatedResults.h"

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/report/RunResults.h"

namespace balancenet::report {
namespace {

// --alpha as the run wrote it: a number, "iid", or null (nlohmann writes the infinity that means iid as null).
std::string alphaText(const nlohmann::json& summary) {
  if (!summary.contains("alpha")) return "";
  const auto& a = summary["alpha"];
  if (a.is_null()) return "iid";
  if (a.is_number()) return fmt::format("{:g}", a.get<double>());
  return a.is_string() ? a.get<std::string>() : a.dump();
}

std::string number(const nlohmann::json& summary, const char* key, const char* format, double scale = 1) {
  if (!summary.contains(key) || !summary[key].is_number()) return "";
  return fmt::format(fmt::runtime(format), scale * summary[key].get<double>());
}

// The wall seconds and round cells of the first evaluation at or above `target` (summary.json's
// "time_to_accuracy": {"0.80": {"seconds", "round"} | null}); empty when never reached.
std::pair<std::string, std::string> timeTo(const nlohmann::json& summary, double target) {
  if (!summary.contains("time_to_accuracy") || !summary["time_to_accuracy"].is_object()) return {};
  const auto& reached = summary["time_to_accuracy"];
  const auto key = metrics::accuracyKey(target);
  if (!reached.contains(key) || !reached[key].is_object()) return {};
  return {number(reached[key], "seconds", "{:.1f}"), number(reached[key], "round", "{:.0f}")};
}

}  // namespace

std::string FederatedResults::label() const {
  return fmt::format("{} ({})", runName(dir), summary.value("strategy", "?"));
}

bool isFederatedSummary(const nlohmann::json& summary) {
  return summary.is_object() && summary.value("kind", "") == "federated";
}

FederatedResults loadFederatedRun(const std::string& dir) {
  FederatedResults r;
  r.dir = dir;
  r.summary = readSummaryJson(dir);
  const std::string path = dir + "/rounds.csv";
  const auto rows = readCsv(path);
  const auto& h = rows[0];
  const int roundCol = column(h, "round", path), wallCol = column(h, "wall_s", path),
            accuracyCol = column(h, "test_accuracy", path), clientCol = column(h, "client", path),
            assignedCol = column(h, "assigned_steps", path), doneCol = column(h, "done_steps", path),
            statusCol = column(h, "status", path);
  for (size_t i = 1; i < rows.size(); ++i) {
    const auto& row = rows[i];
    try {
      const int64_t round = std::stoll(row.at(roundCol));
      if (r.rounds.empty() || r.rounds.back().round != round) {
        FederatedRound next;
        next.round = round;
        next.wallSeconds = std::stod(row.at(wallCol));
        r.rounds.push_back(next);
      }
      auto& current = r.rounds.back();
      // The accuracy is empty when the round was not evaluated (and then the row may end before it).
      if (accuracyCol < static_cast<int>(row.size()) && !row[accuracyCol].empty())
        current.testAccuracy = std::stod(row[accuracyCol]);
      current.clients.push_back({std::stoi(row.at(clientCol)), std::stoll(row.at(assignedCol)),
                                 std::stoll(row.at(doneCol)), row.at(statusCol)});
    } catch (const std::exception&) {  // std::out_of_range (a short row), std::invalid_argument (not a number)
      throw UsageError(fmt::format("{}: line {} is malformed", path, i + 1));
    }
  }
  return r;
}

FederatedTable federatedTable(const std::vector<FederatedResults>& runs, const std::vector<std::string>& labels) {
  FederatedTable t;
  t.columns = {"run", "strategy", "alpha", "rounds", "wall_s"};
  for (double target : kFederatedTargets) {
    t.columns.push_back(fmt::format("s_to_{:.0f}%", 100 * target));
    t.columns.push_back(fmt::format("round_to_{:.0f}%", 100 * target));
  }
  for (const char* c : {"final_accuracy_%", "upload_MB", "download_MB", "client_idle_%"}) t.columns.push_back(c);
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& s = runs[i].summary;
    std::vector<std::string> row{labels.at(i), s.value("strategy", ""), alphaText(s), number(s, "rounds", "{:.0f}"),
                                 number(s, "wall_seconds", "{:.1f}")};
    for (double target : kFederatedTargets) {
      auto [seconds, round] = timeTo(s, target);
      row.push_back(seconds);
      row.push_back(round);
    }
    row.push_back(number(s, "final_accuracy", "{:.2f}", 100));
    row.push_back(number(s, "upload_bytes", "{:.1f}", 1e-6));
    row.push_back(number(s, "download_bytes", "{:.1f}", 1e-6));
    row.push_back(number(s, "client_idle_fraction", "{:.1f}", 100));
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string FederatedTable::csv() const {
  auto line = [](const std::vector<std::string>& cells) { return fmt::format("{}\n", fmt::join(cells, ",")); };
  std::string out = line(columns);
  for (const auto& row : rows) out += line(row);
  return out;
}

std::string FederatedTable::markdown() const {
  auto line = [](const std::vector<std::string>& cells) {
    std::string out = "|";
    for (const auto& c : cells) out += " " + (c.empty() ? std::string("-") : c) + " |";
    return out + "\n";
  };
  std::string out = line(columns) + "|";
  for (size_t i = 0; i < columns.size(); ++i) out += "---|";
  out += "\n";
  for (const auto& row : rows) out += line(row);
  return out;
}

}  // namespace balancenet::report
