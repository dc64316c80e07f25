// Thread ranks over c10d's HashStore and loopback Gloo: the real collectives, without processes.
#include "testing/ThreadRanks.h"

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "balancenet/comm/Rendezvous.h"

namespace balancenet::testing {

void runRanks(int world, const std::function<void(comm::Communicator&)>& fn, c10::intrusive_ptr<c10d::Store> store) {
  if (!store) store = c10::make_intrusive<c10d::HashStore>();
  std::exception_ptr firstError;
  std::mutex mutex;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank)
    threads.emplace_back([&, rank] {
      try {
        auto comm = comm::joinGroup(store, rank, world, std::chrono::seconds(30));
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
