// Per-client channels over the job's store (see ClientChannel.h for the protocol).
#include "balancenet/federated/process/ClientChannel.h"

#include <ATen/ATen.h>

#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "balancenet/comm/GroupPrefixes.h"
#include "balancenet/comm/Rendezvous.h"
#include "balancenet/core/DetachedTask.h"
#include "balancenet/core/Error.h"

namespace balancenet::federated {
namespace {

constexpr int kServerRank = 0, kClientRank = 1;
constexpr int kHeaderTag = 1, kModelTag = 2;

std::string generationKey(int client) { return fmt::format("fed/{}/generation", client); }
// Set by a client right before it joins its channel: the server joins only a generation whose client got
// that far, so its join does not sit in the store waiting for a client that died before (a TCPStore
// client serialises its operations, and a blocked wait would hold up every other one).
std::string joiningKey(int client, int64_t generation) { return fmt::format("fed/{}/{}/joining", client, generation); }

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

// Header and model (undefined: header only) to `peer`; returns once both were taken.
void sendOn(comm::Communicator& comm, int peer, const MessageHeader& header, const at::Tensor& model) {
  auto slots = encodeHeader(header);
  auto headerSent = comm.sendAsync(slots, peer, kHeaderTag);
  if (model.defined()) {
    auto body = model.contiguous();
    comm.sendAsync(body, peer, kModelTag).wait();
  }
  headerSent.wait();
}

}  // namespace

ClientChannel::ClientChannel(std::shared_ptr<comm::Communicator> comm, int client, int64_t generation)
    : comm_(std::move(comm)), client_(client), generation_(generation) {}

std::unique_ptr<ClientChannel> ClientChannel::connectClient(const c10::intrusive_ptr<c10d::Store>& store, int client,
                                                            const ChannelOptions& options) {
  const int64_t generation = store->add(generationKey(client), 1);
  store->set(joiningKey(client, generation), std::vector<uint8_t>{1});
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

std::unique_ptr<ClientChannel> ClientChannel::acceptNewest(const c10::intrusive_ptr<c10d::Store>& store, int client,
                                                           int64_t after,
                                                           std::chrono::steady_clock::time_point deadline,
                                                           const ChannelOptions& options) {
  ChannelAcceptor acceptor(store, client, after, options);
  for (;;) {
    if (auto channel = acceptor.poll()) return channel;
    if (std::chrono::steady_clock::now() >= deadline) return nullptr;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

ChannelAcceptor::ChannelAcceptor(c10::intrusive_ptr<c10d::Store> store, int client, int64_t after,
                                 ChannelOptions options)
    : store_(std::move(store)), client_(client), tried_(after), options_(std::move(options)) {}

std::unique_ptr<ClientChannel> ChannelAcceptor::poll() {
  const int64_t newest = ClientChannel::announcedGeneration(*store_, client_);
  if (newest > tried_ && store_->check({joiningKey(client_, newest)})) {
    tried_ = newest;
    // An overtaken join is left to fail or time out on its thread.
    join_ = runDetached([store = store_, client = client_, newest, options = options_] {
      return ClientChannel::acceptClient(store, client, newest, options);
    });
  }
  if (join_.valid() && join_.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    try {
      return join_.get();
    } catch (const std::exception& e) {  // the client of `tried_` died while the channel formed
      spdlog::debug("client {}: generation {} did not form: {}", client_, tried_, firstLine(e.what()));
    }
  }
  return nullptr;
}

void ClientChannel::send(const MessageHeader& header, const at::Tensor& model) {
  sendOn(*comm_, comm_->rank() == kServerRank ? kClientRank : kServerRank, header, model);
}

Message ClientChannel::receive(int64_t modelSize) {
  return receiveOn(*comm_, comm_->rank() == kServerRank ? kClientRank : kServerRank, modelSize);
}

std::future<Message> ClientChannel::exchangeLater(const MessageHeader& header, const at::Tensor& model,
                                                  int64_t modelSize) {
  const int peer = comm_->rank() == kServerRank ? kClientRank : kServerRank;
  // The send too: a stopped client stops taking a model larger than the socket buffers, and the server must not
  // block on it; its task then simply has no answer by its give-up time. `model` is held by the task.
  return runDetached([comm = comm_, peer, header, model, modelSize] {
    sendOn(*comm, peer, header, model);
    return receiveOn(*comm, peer, modelSize);
  });
}

}  // namespace balancenet::federated
