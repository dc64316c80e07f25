// runDetached: a function on a thread of its own whose future may be dropped without waiting for it.
#pragma once
#include <exception>
#include <future>
#include <thread>
#include <type_traits>
#include <utility>

namespace balancenet {

// Unlike std::async's, the returned future does not block when destroyed: a caller that stops caring (a
// server giving up on a silent peer) moves on while `work` ends by itself. `work` must keep alive what it
// uses (capture shared owners by value). Its exception is rethrown by the future's get().
template <typename F>
std::future<std::invoke_result_t<F>> runDetached(F work) {
  std::promise<std::invoke_result_t<F>> promise;
  auto future = promise.get_future();
  std::thread([work = std::move(work), promise = std::move(promise)]() mutable {
    try {
      if constexpr (std::is_void_v<std::invoke_result_t<F>>) {
        work();
        promise.set_value();
      } else {
        promise.set_value(work());
      }
    } catch (...) {
      promise.set_exception(std::current_exception());
    }
  }).detach();
  return future;
}

}  // namespace balancenet
