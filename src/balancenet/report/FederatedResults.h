// FederatedResults: what a finished federated run directory holds (summary.json with "kind": "federated",
// rounds.csv; formats in federated/RoundLog.h), read back, and the table `report` and `compare` show of it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "balancenet/metrics/TimeToAccuracy.h"

namespace balancenet::report {

struct ClientRoundSteps {
  int client = 0;
  int64_t assignedSteps = 0;
  int64_t doneSteps = 0;
  std::string status;  // ok | late | dead | skipped
};

struct FederatedRound {
  int64_t round = 0;
  double wallSeconds = 0;
  std::optional<double> testAccuracy;  // absent when not evaluated after this round
  std::vector<ClientRoundSteps> clients;
};

struct FederatedResults {
  std::string dir;
  nlohmann::json summary;
  std::vector<FederatedRound> rounds;  // in rounds.csv's order

  // The run's name on pages and in tables: its directory's name and its strategy.
  std::string label() const;
};

// Whether summary.json says the run was federated (a training run's has no "kind").
bool isFederatedSummary(const nlohmann::json& summary);

// Throws UsageError naming the file when summary.json or rounds.csv is missing or malformed.
FederatedResults loadFederatedRun(const std::string& dir);

// The federated table (one row per run), the same columns in `report`'s page and `compare`'s CSV/markdown.
// Cells are plain text, empty where the run has no value (never reached 80%, an older summary).
struct FederatedTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;

  std::string csv() const;
  std::string markdown() const;  // empty cells as "-"
};

// `labels[i]` names runs[i] in the first column.
FederatedTable federatedTable(const std::vector<FederatedResults>& runs, const std::vector<std::string>& labels);

// The accuracy thresholds of summary.json's time_to_accuracy, in the table's order (train's too).
inline constexpr const auto& kFederatedTargets = metrics::kAccuracyTargets;

}  // namespace balancenet::report
