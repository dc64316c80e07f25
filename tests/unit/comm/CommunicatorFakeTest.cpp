// Communicator over a fake c10d Backend: what it does with a backend's answers (sums, failures) checked without
// forming a real group. The seam (comm/group/) takes any c10d::Backend.
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "balancenet/comm/group/Communicator.h"
#include "balancenet/comm/group/ProcessGroupView.h"
#include "balancenet/core/Error.h"
#include "testing/RecordingGpuGroup.h"

namespace balancenet::comm {
namespace {

// Done at once; or, with a failure, throwing it from wait() with c10d's multi-line backtrace.
class FakeWork : public c10d::Work {
 public:
  explicit FakeWork(std::string failure = "") : failure_(std::move(failure)) {}
  bool wait(std::chrono::milliseconds) override {
    if (!failure_.empty()) throw std::runtime_error(failure_);
    return true;
  }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override {
    auto future = c10::make_intrusive<c10::ivalue::Future>(c10::NoneType::get());
    future->markCompleted();
    return future;
  }

 private:
  std::string failure_;
};

// Rank 0 of two whose peer holds the same tensors: a sum doubles them. `failure` makes every operation fail.
class FakeBackend : public c10d::Backend {
 public:
  explicit FakeBackend(std::string failure = "") : Backend(0, 2), failure_(std::move(failure)) {}
  const std::string getBackendName() const override { return "fake"; }
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors, const c10d::AllreduceOptions&) override {
    ++allreduces;
    if (failure_.empty())
      for (auto& t : tensors) t.mul_(2);
    return c10::make_intrusive<FakeWork>(failure_);
  }
  int allreduces = 0;

 private:
  std::string failure_;
};

TEST(CommunicatorFake, SumsThroughTheBackend) {
  auto backend = c10::make_intrusive<FakeBackend>();
  Communicator comm(c10::make_intrusive<c10d::HashStore>(), backend);
  EXPECT_EQ(comm.rank(), 0);
  EXPECT_EQ(comm.size(), 2);
  auto t = at::arange(4, at::kFloat);
  comm.allreduceSum(t);
  EXPECT_TRUE(at::equal(t, at::arange(4, at::kFloat) * 2));
  EXPECT_EQ(backend->allreduces, 1);
}

TEST(CommunicatorFake, ABackendFailureIsOneLineNamingTheOperationAndRank) {
  Communicator comm(
      c10::make_intrusive<c10d::HashStore>(),
      c10::make_intrusive<FakeBackend>("Connection reset by peer\nException raised from recvBytes at ..."));
  auto t = at::ones({3});
  try {
    comm.allreduceSum(t);
    FAIL() << "no failure";
  } catch (const RuntimeFailure& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_NE(what.find("all-reduce failed on rank 0"), std::string::npos) << what;
    EXPECT_NE(what.find("Connection reset by peer"), std::string::npos) << what;
  }
}

// The group that owns a GPU group ends it as it goes (an elastic re-form drops the old generation before forming
// the next), though another reference (here the test's) would keep NCCL's destructor from running yet.
TEST(CommunicatorFake, DroppingTheGroupEndsItsGpuGroup) {
  std::vector<std::string> ended;
  auto gpu =
      c10::make_intrusive<testing::RecordingGpuGroup>(0, 2, [&](const std::string& how) { ended.push_back(how); });
  {
    Communicator comm(c10::make_intrusive<c10d::HashStore>(), c10::make_intrusive<FakeBackend>());
    comm.attachGpuGroup(gpu);
    EXPECT_TRUE(ended.empty());
  }
  EXPECT_EQ(ended, std::vector<std::string>{"abort"});
}

// torch.distributed gets a ProcessGroup over the very backend balancenet drives (the Python package's hook).
TEST(CommunicatorFake, TheProcessGroupWrapsTheSameBackend) {
  auto backend = c10::make_intrusive<FakeBackend>();
  Communicator comm(c10::make_intrusive<c10d::HashStore>(), backend);
  auto group = processGroupOf(comm);
  EXPECT_EQ(group->getRank(), 0);
  EXPECT_EQ(group->getSize(), 2);
  EXPECT_EQ(group->getBackend(c10::DeviceType::CPU).get(), backend.get());
}

}  // namespace
}  // namespace balancenet::comm
