// RecordingGpuGroup: a stand-in for a NCCL group, without a GPU, that records how it was ended, for the tests that a
// dropped group is ended by balancenet (NCCL's own destructor warns that nobody did, and ends it only when its last
// reference goes).
#pragma once
#include <functional>
#include <string>
#include <utility>

#include <torch/csrc/distributed/c10d/Backend.hpp>

namespace balancenet::testing {

class RecordingGpuGroup : public c10d::Backend {
 public:
  // `record` is told "abort" or "shutdown" as each is called.
  RecordingGpuGroup(int rank, int size, std::function<void(const std::string&)> record)
      : Backend(rank, size), record_(std::move(record)) {}
  const std::string getBackendName() const override { return "recording"; }
  void abort() override { record_("abort"); }
  void shutdown() override { record_("shutdown"); }

 private:
  std::function<void(const std::string&)> record_;
};

}  // namespace balancenet::testing
