// GlooGroup: forms a Gloo group over a c10d store. With Communicator (its collectives) and MeshAllReduce (the
// algorithms c10d does not select) this folder holds every c10d process-group and Gloo call of balancenet, so
// that the next libtorch change touches one place; the rest of the code sees Communicator and c10d::Store only.
#pragma once
#include <chrono>
#include <memory>
#include <string>

#include <c10/util/intrusive_ptr.h>

#include "balancenet/comm/group/Communicator.h"

namespace balancenet::comm {

// c10d's default: Gloo's threads per process group, which run the collectives' copies and reductions.
inline constexpr int kDefaultGlooThreads = 2;

// Forms a Gloo group over an existing store (a shared HashStore lets tests run ranks as threads), with
// `threads` Gloo threads, listening on `iface` when given, else loopback for a loopback `host`, else the host's
// default device. Throws RuntimeFailure (one line) when the peers cannot be reached.
std::unique_ptr<Communicator> joinGroup(const c10::intrusive_ptr<c10d::Store>& store, int rank, int worldSize,
                                        std::chrono::milliseconds timeout, const std::string& host = "127.0.0.1",
                                        const std::string& iface = "", int threads = kDefaultGlooThreads);

bool isLoopback(const std::string& host);

}  // namespace balancenet::comm
