// The store protocol of Membership (keys under elastic/).
#include "balancenet/elastic/Membership.h"

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <algorithm>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "balancenet/core/Error.h"
#include "balancenet/elastic/StallReport.h"

namespace balancenet::elastic {
namespace {

constexpr std::chrono::milliseconds kPoll{50};

std::string genKey(int number, const std::string& what) { return fmt::format("elastic/g{}/{}", number, what); }
// A joiner's admission: "-1" while it waits, then the generation it is admitted to, or "-2" when
// refused (the reason under refusedKey).
std::string admitKey(int member) { return fmt::format("elastic/admit/{}", member); }
std::string refusedKey(int member) { return fmt::format("elastic/refused/{}", member); }
constexpr int kWaiting = -1;
constexpr int kRefused = -2;

std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }

// "3:57,5:-1" -> members 3 and 5 with their committed steps, sorted by member id.
Generation parseClosed(int number, const std::string& text) {
  std::vector<std::pair<int, int64_t>> entries;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto colon = item.find(':');
    entries.emplace_back(std::stoi(item.substr(0, colon)), std::stoll(item.substr(colon + 1)));
  }
  std::sort(entries.begin(), entries.end());
  Generation g;
  g.number = number;
  for (auto [m, c] : entries) {
    g.members.push_back(m);
    g.committed.push_back(c);
  }
  return g;
}

std::vector<int> parseIds(const std::string& text) {
  std::vector<int> ids;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) ids.push_back(std::stoi(item));
  return ids;
}

}  // namespace

int Generation::rankOf(int member) const {
  auto it = std::find(members.begin(), members.end(), member);
  return it == members.end() ? -1 : static_cast<int>(it - members.begin());
}

int Generation::sourceRank() const {
  return static_cast<int>(std::max_element(committed.begin(), committed.end()) - committed.begin());
}

std::string Generation::memberList() const { return fmt::format("{}", fmt::join(members, ",")); }

Membership::Membership(c10::intrusive_ptr<c10d::Store> jobStore, std::chrono::milliseconds peerTimeout)
    : store_(std::move(jobStore)), peerTimeout_(peerTimeout) {}

std::string Membership::get(const std::string& key) {
  auto v = store_->get(key);
  return {v.begin(), v.end()};
}

void Membership::set(const std::string& key, const std::string& value) { store_->set(key, bytes(value)); }

Generation Membership::form(int number, int member, int64_t committed, const std::vector<int>& candidates,
                            bool mayClose, std::chrono::milliseconds waitAtMost) {
  set(genKey(number, fmt::format("reg/{}", member)), std::to_string(committed));
  const auto closedKey = genKey(number, "closed");
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    if (store_->check({closedKey})) return parseClosed(number, get(closedKey));
    const bool late = std::chrono::steady_clock::now() - start > (mayClose ? peerTimeout_ : waitAtMost);
    if (!mayClose && late)
      throw RuntimeFailure(
          fmt::format("generation {} of the job did not form within {} s", number, waitAtMost.count() / 1000.0));
    if (!mayClose && finished()) throw RuntimeFailure("the job finished before this worker could join");
    if (mayClose) {
      std::vector<std::string> registered;
      bool everyoneAccounted = true;
      for (int c : candidates) {
        const auto reg = genKey(number, fmt::format("reg/{}", c));
        if (store_->check({reg}))
          registered.push_back(fmt::format("{}:{}", c, get(reg)));
        else if (staleMembers(*store_, {c}).empty() && !waitingToJoin(c))
          everyoneAccounted = false;  // alive, still finishing its failed collective
      }
      if (everyoneAccounted || late) {
        const auto closed = store_->compareSet(closedKey, {}, bytes(fmt::format("{}", fmt::join(registered, ","))));
        return parseClosed(number, std::string(closed.begin(), closed.end()));
      }
    }
    std::this_thread::sleep_for(kPoll);
  }
}

void Membership::recordInitialWorld(int worldSize) { set("elastic/world0", std::to_string(worldSize)); }

int Membership::newMemberId() {
  // The key exists once rank 0 is up: get() waits for it (up to the store's timeout).
  const int world0 = std::stoi(get("elastic/world0"));
  return world0 + static_cast<int>(store_->add("elastic/extra-members", 1)) - 1;
}

void Membership::requestJoin(int member) {
  // "Waiting" first: once the join record is out, rank 0 may admit us at any moment, and a reset
  // written after that would erase the admission (we would time out, the members re-form for nothing).
  set(admitKey(member), std::to_string(kWaiting));
  const auto n = store_->add("elastic/joins", 1) - 1;
  set(fmt::format("elastic/join/{}", n), std::to_string(member));
}

bool Membership::waitingToJoin(int member) {
  const auto key = admitKey(member);
  return store_->check({key}) && std::stoi(get(key)) == kWaiting;
}

std::optional<int> Membership::waitForAdmission(int member, std::chrono::milliseconds waitAtMost) {
  const auto key = admitKey(member);
  const auto deadline = std::chrono::steady_clock::now() + waitAtMost;
  while (true) {
    if (std::chrono::steady_clock::now() > deadline)
      throw RuntimeFailure(
          fmt::format("rank {} was not admitted within {} s (no worker left to admit it, or the job "
                      "is at --max-workers)",
                      member, waitAtMost.count() / 1000.0));
    const int generation = std::stoi(get(key));
    if (generation >= 0) return generation;
    if (generation == kRefused)
      throw RuntimeFailure(fmt::format("rank {} was refused: {}", member, get(refusedKey(member))));
    if (finished()) return std::nullopt;
    std::this_thread::sleep_for(kPoll * 4);
  }
}

std::vector<int> Membership::takePendingJoiners(int room) {
  const auto requested = store_->add("elastic/joins", 0);
  const auto seen = store_->check({"elastic/joins-seen"}) ? std::stoll(get("elastic/joins-seen")) : 0;
  std::vector<int> joiners;
  int64_t n = seen;
  for (; n < requested && static_cast<int>(joiners.size()) < room; ++n) {
    const int m = std::stoi(get(fmt::format("elastic/join/{}", n)));
    if (std::find(joiners.begin(), joiners.end(), m) == joiners.end()) joiners.push_back(m);
  }
  if (n != seen) set("elastic/joins-seen", std::to_string(n));
  return joiners;
}

void Membership::announce(int generation, const Plan& plan) {
  for (int m : plan.joiners) set(admitKey(m), std::to_string(generation));
  set(genKey(generation, "plan"), fmt::format("{} {}", plan.atStep, fmt::join(plan.joiners, ",")));
}

void Membership::refuse(int member, const std::string& reason) {
  set(refusedKey(member), reason);  // before the verdict, which sends the joiner to read it
  set(admitKey(member), std::to_string(kRefused));
}

std::optional<Plan> Membership::planned(int generation) {
  const auto key = genKey(generation, "plan");
  if (!store_->check({key})) return std::nullopt;
  std::istringstream in(get(key));
  Plan p;
  std::string ids;
  in >> p.atStep >> ids;
  p.joiners = parseIds(ids);
  return p;
}

void Membership::markFinished() { set("elastic/finished", "1"); }

bool Membership::finished() { return store_->check({"elastic/finished"}); }

bool Membership::anyBeating(const std::vector<int>& members) {
  return staleMembers(*store_, members).size() < members.size();
}

}  // namespace balancenet::elastic
