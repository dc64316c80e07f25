// Per-client channels over the job's store (see ClientChannel.h for the protocol).
#include "balancenet/federated/ClientChannel.h"

#include <ATen/ATen.h>

#include <thread>

#include <fmt/format.h>

#include "balancenet/comm/GroupPrefixes.h"
#include "balancenet/comm/Rendezvous.h"

namespace balancenet::federated {
namespace {

constexpr int kServerRank = 0, kClientRank = 1;
constexpr int kHeaderTag = 1, kModelTag = 2;

std::string generationKey(int client) { return fmt::format("fed/{}/generation", client); }

std::unique_ptr<comm::Communicator> joinChannel(const c10::intrusive_ptr<c10d::Store>& store, int client,
                                                int64_t generation, int rank, const ChannelOptions& o) {
  return comm::joinGroupUnder(comm::federatedChannelPrefix(client, generation), store, rank, 2, o.timeout, o.host,
                              o.iface);
}

bool carriesModel(MessageKind kind) { return kind == MessageKind::Task || kind == MessageKind::Update; }

Message receiveOn(comm::Communicator& comm, int peer, int64_t modelSize) {
  auto header = at::zeros({kHeaderSlots}, at::kDouble);
  comm.recv(header, peer, kHeaderTag);
  Message m{decodeHeader(header), {}};
  if (carriesModel(m.header.kind)) {
    m.model = at::empty({modelSize}, at::kFloat);
    comm.recv(m.model, peer, kModelTag);
  }
  return m;
}

}  // namespace

ClientChannel::ClientChannel(std::shared_ptr<comm::Communicator> comm, int client, int64_t generation)
    : comm_(std::move(comm)), client_(client), generation_(generation) {}

std::unique_ptr<ClientChannel> ClientChannel::connectClient(const c10::intrusive_ptr<c10d::Store>& store, int client,
                                                            const ChannelOptions& options) {
  const int64_t generation = store->add(generationKey(client), 1);
  return std::unique_ptr<ClientChannel>(
      new ClientChannel(joinChannel(store, client, generation, kClientRank, options), client, generation));
}

int64_t ClientChannel::announcedGeneration(c10d::Store& store, int client) {
  return store.add(generationKey(client), 0);
}

std::unique_ptr<ClientChannel> ClientChannel::acceptClient(const c10::intrusive_ptr<c10d::Store>& store, int client,
                                                           int64_t generation, const ChannelOptions& options) {
  return std::unique_ptr<ClientChannel>(
      new ClientChannel(joinChannel(store, client, generation, kServerRank, options), client, generation));
}

void ClientChannel::send(const MessageHeader& header, const at::Tensor& model) {
  const int peer = comm_->rank() == kServerRank ? kClientRank : kServerRank;
  auto slots = encodeHeader(header);
  auto headerSent = comm_->sendAsync(slots, peer, kHeaderTag);
  if (model.defined()) {
    auto body = model.contiguous();
    comm_->sendAsync(body, peer, kModelTag).wait();
  }
  headerSent.wait();
}

Message ClientChannel::receive(int64_t modelSize) {
  return receiveOn(*comm_, comm_->rank() == kServerRank ? kClientRank : kServerRank, modelSize);
}

std::future<Message> ClientChannel::receiveLater(int64_t modelSize) {
  std::promise<Message> promise;
  auto future = promise.get_future();
  const int peer = comm_->rank() == kServerRank ? kClientRank : kServerRank;
  // Detached: a server that gave up on a silent client does not wait for the receive's timeout.
  std::thread([comm = comm_, peer, modelSize, promise = std::move(promise)]() mutable {
    try {
      promise.set_value(receiveOn(*comm, peer, modelSize));
    } catch (...) {
      promise.set_exception(std::current_exception());
    }
  }).detach();
  return future;
}

}  // namespace balancenet::federated
