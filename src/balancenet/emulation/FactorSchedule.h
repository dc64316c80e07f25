// FactorSchedule: one number per node (a slowdown or a pace), possibly changing at given steps.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace balancenet::emulation {

class FactorSchedule {
 public:
  FactorSchedule() = default;
  // base: "1,1,1,4" (option `flag`); changes: "100=1,1,1,16;200=1,1,1,4" (option `scheduleFlag`), each
  // from that step on. Throws UsageError naming the option unless every list has worldSize positive numbers.
  static FactorSchedule parse(const std::string& flag, const std::string& base, const std::string& scheduleFlag,
                              const std::string& changes, int worldSize);
  // As parsed before (a launcher hands its workers the parsed schedule, job/JobConfigJson.h): no check.
  static FactorSchedule of(std::vector<double> base, std::map<int64_t, std::vector<double>> changes) {
    FactorSchedule s;
    s.base_ = std::move(base);
    s.changes_ = std::move(changes);
    return s;
  }
  const std::vector<double>& base() const { return base_; }
  const std::map<int64_t, std::vector<double>>& changes() const { return changes_; }
  // "1,1,0,5" -> one number per node; throws UsageError naming `flag` otherwise.
  static std::vector<double> perNode(const std::string& flag, const std::string& list, int worldSize,
                                     bool allowZero = false);
  bool empty() const { return base_.empty(); }
  double smallest() const;                  // over every worker and every change; empty: +infinity
  double at(int64_t step, int rank) const;  // the value in force at `step`
  // The values of `nodes` only, in that order (a node beyond the list takes node % size's): after an
  // elastic re-form rank r is the worker launched as nodes[r] and keeps that worker's emulated speed.
  FactorSchedule forNodes(const std::vector<int>& nodes) const;
  static std::vector<double> pick(const std::vector<double>& perNode, const std::vector<int>& nodes);

 private:
  std::vector<double> base_;
  std::map<int64_t, std::vector<double>> changes_;
};

}  // namespace balancenet::emulation
