// CommOptions: how a job's gradients travel (the strategies: GradientSync.h). Part of job/JobConfig.h.
#pragma once
#include "balancenet/comm/CommMode.h"
#include "balancenet/comm/OffloadPlan.h"
#include "balancenet/compression/GradCompression.h"
#include "balancenet/core/FieldList.h"

namespace balancenet::comm {

struct CommOptions {
  CommMode mode = CommMode::Auto;  // --comm (see CommMode.h)
  int servers = 0;                 // --ps K: parameter server processes beside the workers (mode ps)
  int staleness = 0;               // --staleness: 0 BSP, s > 0 SSP (mode ps)
  double bucketMb = 25;
  bool overlap = true;  // --no-overlap turns it off
  // --offload-below: with the all-reducing modes, a rank whose share is below this fraction of the largest
  // hands its gradient to a ring peer (OffloadSync.h); 0: never.
  double offloadBelow = kDefaultOffloadBelow;
  bool explain = false;  // --explain-comm: rank 0 prints how each layer is synchronised
  // --grad-compress and --compress-warmup: how the all-reduces cross the wire (lossy, with error feedback); none:
  // exact.
  compression::CompressionOptions compression;
  bool allowLossy = false;  // --allow-lossy-comm: --comm auto may also try the exchanges compressed to bf16

  // The fields a launcher sends its workers (core/FieldList.h): every one.
  BALANCENET_FIELDS(mode, servers, staleness, bucketMb, overlap, offloadBelow, explain, compression, allowLossy);
};
BALANCENET_CHECK_FIELDS(CommOptions);

}  // namespace balancenet::comm
