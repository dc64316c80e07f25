// Thread ranks over c10d's HashStore and loopback Gloo: the real collectives, without processes.
#include "testing/ThreadRanks.h"

#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "balancenet/comm/Rendezvous.h"
#include "balancenet/core/Error.h"

namespace balancenet::testing {
namespace {

// Gloo's full-mesh connect on loopback now and then fails with "Connection closed by peer" while ctest runs
// other multi-rank binaries beside it (seen once in ~700 tests of a clean-clone CI run, in a test that does
// nothing unusual; PyTorch's own Gloo tests show the same: pytorch/pytorch#53270, #57469). Forming the group
// is set-up, not what a test checks: every rank forms it, they all wait for each other, and if any rank failed
// to connect they all form it again under a fresh key prefix (a few times at most).
constexpr int kFormationAttempts = 3;

class Formation {
 public:
  explicit Formation(int world) : world_(world) {}
  // Every rank reports whether it connected; returns, once all have, whether they all did.
  bool allConnected(bool connected) {
    std::unique_lock<std::mutex> lock(mutex_);
    const int round = round_;
    failed_ = failed_ || !connected;
    if (++arrived_ == world_) {
      result_ = !failed_;
      arrived_ = 0;
      failed_ = false;
      ++round_;
      done_.notify_all();
    } else {
      done_.wait(lock, [&] { return round_ != round; });
    }
    return result_;
  }

 private:
  const int world_;
  std::mutex mutex_;
  std::condition_variable done_;
  int arrived_ = 0;
  int round_ = 0;
  bool failed_ = false;
  bool result_ = false;
};

}  // namespace

void runRanks(int world, const std::function<void(comm::Communicator&)>& fn, c10::intrusive_ptr<c10d::Store> store) {
  if (!store) store = c10::make_intrusive<c10d::HashStore>();
  std::exception_ptr firstError;
  std::mutex mutex;
  Formation formation(world);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank)
    threads.emplace_back([&, rank] {
      try {
        std::unique_ptr<comm::Communicator> comm;
        std::string lastFailure;
        for (int attempt = 0; attempt < kFormationAttempts && !comm; ++attempt) {
          auto scoped = attempt == 0 ? store
                                     : c10::intrusive_ptr<c10d::Store>(c10::make_intrusive<c10d::PrefixStore>(
                                           "formation-" + std::to_string(attempt), store));
          std::unique_ptr<comm::Communicator> formed;
          try {
            formed = comm::joinGroup(scoped, rank, world, std::chrono::seconds(30));
          } catch (const RuntimeFailure& e) {
            lastFailure = e.what();
          }
          if (formation.allConnected(formed != nullptr)) comm = std::move(formed);
        }
        if (!comm)
          throw RuntimeFailure("thread ranks could not form their group in " + std::to_string(kFormationAttempts) +
                               " attempts" + (lastFailure.empty() ? "" : ": " + lastFailure));
        fn(*comm);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!firstError) firstError = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  if (firstError) std::rethrow_exception(firstError);
}

}  // namespace balancenet::testing
