// GlooMesh: the job's own Gloo context, a full mesh of pairs beside the process group's, for the all-reduce
// algorithms c10d never selects (its ProcessGroupGloo always runs the ring).
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include <c10/util/intrusive_ptr.h>

#include "balancenet/comm/Exchange.h"

namespace c10d {
class ProcessGroup;
class Store;
}  // namespace c10d
namespace gloo {
class Context;
}

namespace balancenet::comm {

class GlooMesh {
 public:
  // Collective over the group's ranks: connects every pair under `store` (a prefix of the group's own store)
  // on the group's Gloo device and with its timeout, so it reaches the same peers by the same interface.
  GlooMesh(c10d::ProcessGroup& group, const c10::intrusive_ptr<c10d::Store>& store);
  ~GlooMesh();
  GlooMesh(const GlooMesh&) = delete;
  GlooMesh& operator=(const GlooMesh&) = delete;

  // Sums `count` floats at `data` over the ranks, in place, by `exchange` (not Ring: that is the process
  // group's). Every rank ends with the same bits: each element is reduced by one rank in a fixed order (its own
  // value, then its peers' in rank order), whatever order messages arrive in, and then copied to the others.
  // Blocks; Gloo's errors propagate.
  void allreduceSum(float* data, int64_t count, Exchange exchange);

 private:
  void allreduceByAllToAll(float* data, int64_t count);

  std::shared_ptr<gloo::Context> context_;
  std::vector<float> scatterIn_, scatterOut_, gatherIn_;  // all-to-all's staging, reused across steps
  uint32_t nextTag_ = 0;  // one per operation, as c10d does: a late message never meets the wrong one
};

}  // namespace balancenet::comm
