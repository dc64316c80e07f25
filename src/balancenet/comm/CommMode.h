// CommMode: how gradients travel (--comm), with its registry: name <-> value and the help text of each.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace balancenet::comm {

enum class CommMode { Auto, AllReduce, Flat, HalvingDoubling, AllToAll, SufficientFactors, Hybrid, ParameterServers };

struct CommModeEntry {
  CommMode mode;
  const char* name;  // as --comm takes it
  const char* help;
};

// Every mode, in the order --help lists them.
inline const std::vector<CommModeEntry>& commModes() {
  static const std::vector<CommModeEntry> table = {
      {CommMode::Auto, "auto",
       "the default: times allreduce, flat, hd and a2a on the job's first steps (again after a membership change "
       "or a drift of the step time) and keeps the fastest"},
      {CommMode::AllReduce, "allreduce", "buckets overlapped with backward"},
      {CommMode::Flat, "flat", "one ring all-reduce after backward"},
      {CommMode::HalvingDoubling, "hd", "one halving-doubling all-reduce after backward (2 log2 P phases at 2^k)"},
      {CommMode::AllToAll, "a2a", "reduce-scatter and all-gather by two all-to-alls after backward (2 phases)"},
      {CommMode::SufficientFactors, "sfb", "fully connected layers send sufficient factors, the rest all-reduce"},
      {CommMode::Hybrid, "hybrid", "per fully connected layer, whichever moves fewer bytes for the current split"},
      {CommMode::ParameterServers, "ps", "parameter servers, see --ps and --staleness"},
  };
  return table;
}

inline const char* commModeName(CommMode mode) {
  for (const auto& e : commModes())
    if (e.mode == mode) return e.name;
  return "?";
}

inline std::optional<CommMode> commModeNamed(const std::string& name) {
  for (const auto& e : commModes())
    if (name == e.name) return e.mode;
  return std::nullopt;
}

inline std::vector<std::string> commModeNames() {
  std::vector<std::string> names;
  for (const auto& e : commModes()) names.emplace_back(e.name);
  return names;
}

// The modes that sum the whole gradient by an all-reduce (what auto chooses among, what --elastic and
// --offload-below work with).
inline bool allReduces(CommMode mode) {
  return mode == CommMode::Auto || mode == CommMode::AllReduce || mode == CommMode::Flat ||
         mode == CommMode::HalvingDoubling || mode == CommMode::AllToAll;
}

// sfb and hybrid capture the fully connected layers' inputs and output gradients during the step.
inline bool capturesFactors(CommMode mode) { return mode == CommMode::SufficientFactors || mode == CommMode::Hybrid; }

}  // namespace balancenet::comm
