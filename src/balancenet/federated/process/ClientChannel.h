// ClientChannel: one federated client's link to the server, a 2-rank Gloo group of its own (server rank 0,
// client rank 1) over the job's store under "fed/<client>/<generation>". A dead client breaks only its
// own channel; a restarted one announces generation + 1 and forms a new channel, which the server picks
// up at a round boundary (or at start-up, when the client was restarted before the server reached it).
#pragma once
#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>

#include <ATen/core/Tensor.h>
#include <c10/util/intrusive_ptr.h>

#include "balancenet/comm/group/Communicator.h"
#include "balancenet/federated/process/UpdateMessage.h"

namespace c10d {
class Store;
}

namespace balancenet::federated {

// A message: the header and the flat model (weights for a task, the delta for an update; undefined for Stop).
struct Message {
  MessageHeader header;
  at::Tensor model;
};

struct ChannelOptions {
  std::chrono::milliseconds timeout{3600 * 1000};  // a receive's longest wait (a round may be long)
  std::string host = "127.0.0.1";                  // Gloo's address (comm::RendezvousOptions::glooHost)
  std::string iface;
};

class ClientChannel {
 public:
  // The client's side: takes the next generation from the store (announcing it) and joins as rank 1.
  static std::unique_ptr<ClientChannel> connectClient(const c10::intrusive_ptr<c10d::Store>& store, int client,
                                                      const ChannelOptions& options);
  // The generation a client announced (0: none yet). Does not wait.
  static int64_t announcedGeneration(c10d::Store& store, int client);
  // The server's side of `generation` (announced): joins as rank 0 (waits for the client there).
  static std::unique_ptr<ClientChannel> acceptClient(const c10::intrusive_ptr<c10d::Store>& store, int client,
                                                     int64_t generation, const ChannelOptions& options);
  // The server's side of the client's newest generation above `after`: ChannelAcceptor's polls until one formed
  // (null when none did before `deadline`).
  static std::unique_ptr<ClientChannel> acceptNewest(const c10::intrusive_ptr<c10d::Store>& store, int client,
                                                     int64_t after, std::chrono::steady_clock::time_point deadline,
                                                     const ChannelOptions& options);

  int client() const { return client_; }
  int64_t generation() const { return generation_; }

  // Sends header and model (model may be undefined: a header-only message) and waits until both were taken.
  // Throws RuntimeFailure when the peer is gone.
  void send(const MessageHeader& header, const at::Tensor& model);
  // Blocks for the next message; `modelSize` values follow a Task or an Update.
  Message receive(int64_t modelSize);
  // A task out and its answer back, both on a thread of their own: the future throws when the send or the receive
  // fails (the peer died); a peer that stops answering leaves it pending, and the caller gives up on it.
  std::future<Message> exchangeLater(const MessageHeader& header, const at::Tensor& model, int64_t modelSize);

 private:
  ClientChannel(std::shared_ptr<comm::Communicator> comm, int client, int64_t generation);
  std::shared_ptr<comm::Communicator> comm_;
  int client_;
  int64_t generation_;
};

// The server's side of one client's channel, polled so that a server never waits on a client: each poll joins
// the newest generation above `after` once one is announced and its client has reached the channel (on a thread
// of its own). A generation overtaken by a newer one (its client died and was restarted) is given up, even while
// its join is under way, and one whose join failed is not tried again: the server never waits on a stale one.
class ChannelAcceptor {
 public:
  ChannelAcceptor(c10::intrusive_ptr<c10d::Store> store, int client, int64_t after, ChannelOptions options);
  // The channel once it formed, else null; does not wait.
  std::unique_ptr<ClientChannel> poll();
  // The newest generation whose join was started (`after` before any).
  int64_t tried() const { return tried_; }

 private:
  c10::intrusive_ptr<c10d::Store> store_;
  int client_;
  int64_t tried_;
  ChannelOptions options_;
  std::future<std::unique_ptr<ClientChannel>> join_;
};

}  // namespace balancenet::federated
