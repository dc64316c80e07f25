// MeshAllReduce: the all-reduce algorithms c10d never selects (its ProcessGroupGloo always runs the ring), built
// on a Gloo group's own point-to-point and all-to-all operations. The group is a second one beside the job's
// (its own connections), so these messages never meet the job group's sends, whatever their tags.
#pragma once
#include <cstdint>
#include <vector>

#include <c10/util/intrusive_ptr.h>

#include "balancenet/comm/Exchange.h"

namespace c10d {
class Backend;
}

namespace balancenet::comm {

class MeshAllReduce {
 public:
  explicit MeshAllReduce(c10::intrusive_ptr<c10d::Backend> group);
  ~MeshAllReduce();
  MeshAllReduce(const MeshAllReduce&) = delete;
  MeshAllReduce& operator=(const MeshAllReduce&) = delete;

  // Sums `count` floats at `data` over the ranks, in place, by `exchange` (not Ring: that is the job group's).
  // Every rank ends with the same bits: each element is summed by one rank in a fixed order (its group's members
  // in rank order), whatever order messages arrive in, and then copied to the others. Blocks; errors propagate.
  void allreduceSum(float* data, int64_t count, Exchange exchange);

 private:
  void allreduceByAllToAll(float* data, int64_t count);
  void allreduceByHalvingDoubling(float* data, int64_t count);

  c10::intrusive_ptr<c10d::Backend> group_;
  int rank_;
  int size_;
  std::vector<float> buffer_, staging_;  // reused across steps
};

}  // namespace balancenet::comm
