// The mesh's connection and its two algorithms. Gloo's headers stay in this file.
#include "balancenet/comm/GlooMesh.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <algorithm>

#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>

#include "balancenet/core/Error.h"

namespace balancenet::comm {

GlooMesh::GlooMesh(c10d::ProcessGroup& group, const c10::intrusive_ptr<c10d::Store>& store) {
  auto* gloo = dynamic_cast<c10d::ProcessGroupGloo*>(&group);
  if (!gloo) throw RuntimeFailure("the job's own Gloo mesh needs a Gloo process group");
  auto options = gloo->getOptions();
  const int size = group.getSize();
  auto context = std::make_shared<gloo::rendezvous::Context>(group.getRank(), size);
  context->setTimeout(options->timeout);
  c10d::ProcessGroupGloo::GlooStore glooStore(store);
  context->connectFullMesh(glooStore, options->devices.front());
  context_ = std::move(context);
}

GlooMesh::~GlooMesh() = default;

// Gloo's classic AllreduceHalvingDoubling and AllreduceBcube (allreduce_*.h) bind fixed buffers per pair and
// were seen to leave ranks disagreeing when run again (1 run in 3 at 4 ranks, ExchangeSyncTest); gloo::allreduce's
// BCUBE, on unbound buffers and a fresh tag per call, is the same halving-doubling at a power of two.
void GlooMesh::allreduceSum(float* data, int64_t count, Exchange exchange) {
  if (context_->size == 1 || count == 0) return;
  if (exchange == Exchange::AllToAll) return allreduceByAllToAll(data, count);
  if (exchange == Exchange::Ring) throw RuntimeFailure("the ring all-reduce runs on the process group, not the mesh");
  gloo::AllreduceOptions opts(context_);
  opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::BCUBE);
  opts.setOutput(data, static_cast<size_t>(count));
  opts.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
  opts.setTag(nextTag_++);
  gloo::allreduce(opts);
}

// Reduce-scatter by one all-to-all (rank r receives everyone's r-th chunk and sums it in rank order), then
// all-gather by another (each rank sends its summed chunk to all): two phases, each posting every send and
// receive before it waits, so a stalled peer is waited for at most twice.
void GlooMesh::allreduceByAllToAll(float* data, int64_t count) {
  const int size = context_->size;
  const int64_t chunk = (count + size - 1) / size;
  const int64_t padded = chunk * size;
  scatterIn_.assign(data, data + count);
  scatterIn_.resize(padded, 0.0f);
  scatterOut_.resize(padded);
  gatherIn_.resize(padded);

  auto exchange = [&](float* in, float* out) {
    gloo::AlltoallOptions opts(context_);
    opts.setInput(in, static_cast<size_t>(padded));
    opts.setOutput(out, static_cast<size_t>(padded));
    opts.setTag(nextTag_++);
    gloo::alltoall(opts);
  };
  exchange(scatterIn_.data(), scatterOut_.data());
  // scatterOut_[j * chunk + i] is rank j's element (rank * chunk + i): summed j = 0, 1, ... on every rank alike.
  float* mine = gatherIn_.data();
  std::copy(scatterOut_.begin(), scatterOut_.begin() + chunk, mine);
  for (int j = 1; j < size; ++j) {
    const float* from = scatterOut_.data() + j * chunk;
    for (int64_t i = 0; i < chunk; ++i) mine[i] += from[i];
  }
  for (int j = 1; j < size; ++j) std::copy(mine, mine + chunk, gatherIn_.data() + j * chunk);
  exchange(gatherIn_.data(), scatterOut_.data());
  // Now scatterOut_[j * chunk + i] is rank j's summed chunk: the whole sum, in order.
  std::copy(scatterOut_.begin(), scatterOut_.begin() + count, data);
}

}  // namespace balancenet::comm
