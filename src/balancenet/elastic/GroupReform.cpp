// The re-form and join sequences over the membership's generations, shared by every way of training.
#include "balancenet/elastic/GroupReform.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "balancenet/comm/GroupPrefixes.h"
#include "balancenet/core/Error.h"
#include "balancenet/elastic/StateTransfer.h"

namespace balancenet::elastic {
namespace {

// A host cut off from the network (or whose store host is gone) fails in a c10d store call with a bare
// socket error ("Connection reset by peer"): the line says what it was doing.
template <typename Call>
auto askStore(int64_t step, Call&& call) -> decltype(call()) {
  try {
    return call();
  } catch (const RuntimeFailure&) {
    throw;
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    throw RuntimeFailure(fmt::format("step {}: the job's store stopped answering while the group re-formed ({})", step,
                                     firstLine(e.what())));
  }
}

}  // namespace

GroupReform::GroupReform(c10::intrusive_ptr<c10d::Store> jobStore, Membership& membership, int member, Connect connect,
                         ReformOptions options)
    : store_(std::move(jobStore)),
      membership_(membership),
      member_(member),
      connect_(std::move(connect)),
      options_(options) {}

std::unique_ptr<comm::Communicator> GroupReform::connect(const Generation& g) {
  return connect_(comm::scopedStore(comm::elasticGenerationPrefix(g.number), store_), g.rankOf(member_),
                  static_cast<int>(g.members.size()));
}

std::optional<FormedGroup> GroupReform::join() {
  membership_.requestJoin(member_);
  std::optional<int> number;
  while (true) {
    if (!number) number = membership_.waitForAdmission(member_, options_.joinTimeout);
    if (!number) return std::nullopt;
    Generation g = membership_.form(*number, member_, -1, {}, /*mayClose=*/false, options_.joinTimeout);
    if (g.rankOf(member_) < 0) {  // closed without us (we came late): ask again
      membership_.requestJoin(member_);
      number.reset();
      continue;
    }
    try {
      FormedGroup formed;
      formed.comm = connect(g);
      formed.state = broadcastBytes(*formed.comm, g.sourceRank(), "");
      formed.generation = std::move(g);
      return formed;
    } catch (const std::exception& e) {
      // A member died while the group formed: the others form the next generation, with us.
      spdlog::warn("joining generation {} failed ({}); trying the next one", *number, firstLine(e.what()));
      number = *number + 1;
    }
  }
}

FormedGroup GroupReform::reform(int number, std::vector<int> candidates, int64_t atStep, int64_t committedStep,
                                const std::function<std::string()>& committedState) {
  while (true) {
    Generation g = askStore(atStep, [&] {
      return membership_.form(number, member_, committedStep, candidates, /*mayClose=*/true, options_.joinTimeout);
    });
    if (g.rankOf(member_) < 0) {
      // Closed without us (our heartbeat looked dead, or we came late): join like a new worker.
      spdlog::warn("step {}: rank {} came late to generation {} (members {}); joining again", atStep, member_, number,
                   g.memberList());
      auto joined = join();
      if (!joined) throw RuntimeFailure(fmt::format("rank {}: the job finished without this worker", member_));
      return std::move(*joined);
    }
    if (static_cast<int>(g.members.size()) < options_.minNodes)
      throw RuntimeFailure(fmt::format("step {}: {} worker(s) left (rank(s) {}), fewer than --min-workers {}: stopping",
                                       atStep, g.members.size(), g.memberList(), options_.minNodes));
    try {
      FormedGroup formed;
      formed.comm = connect(g);
      const bool source = g.rankOf(member_) == g.sourceRank();
      formed.state = broadcastBytes(*formed.comm, g.sourceRank(), source ? committedState() : std::string());
      formed.generation = std::move(g);
      return formed;
    } catch (const std::exception& e) {
      spdlog::warn("generation {} failed while forming ({}); forming the next one", number, firstLine(e.what()));
      candidates = g.members;
      ++number;
    }
  }
}

std::vector<int> GroupReform::admittedJoiners(int number, int64_t step) {
  const auto plan = askStore(step, [&] { return membership_.planned(number); });
  return plan ? plan->joiners : std::vector<int>{};
}

}  // namespace balancenet::elastic
