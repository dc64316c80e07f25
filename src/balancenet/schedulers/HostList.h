// HostList: Slurm's compressed lists, expanded as Slurm does ("node[01-04,07]", "2(x3),1").
#pragma once
#include <string>
#include <vector>

namespace balancenet::schedulers {

// The hosts of a Slurm host list, in order: "node[01-04,07],gpu1" is node01 node02 node03 node04 node07 gpu1.
// A name may hold several bracket groups ("r[1-2]n[1-2]": r1n1 r1n2 r2n1 r2n2); a range keeps the width of its
// zero-padded lower bound. Throws UsageError naming `variable` on anything malformed.
std::vector<std::string> expandHostList(const std::string& text, const std::string& variable);

// Tasks on each node of a step, in node order: "2(x3),1" is 2 2 2 1. Throws UsageError naming `variable`.
std::vector<int> expandTasksPerNode(const std::string& text, const std::string& variable);

}  // namespace balancenet::schedulers
