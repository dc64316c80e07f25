// Sockets on 127.0.0.1 only: nothing here is reachable from another machine.
#include "RendezvousPeers.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <stdexcept>

namespace balancenet::testing {
namespace {

sockaddr_in loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

// A listening socket on a free loopback port; returns the fd and sets `port`.
int listenOnLoopback(int& port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  auto addr = loopback(0);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 16) != 0)
    throw std::runtime_error("cannot listen on loopback");
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  port = ntohs(addr.sin_port);
  return fd;
}

int connectTo(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  auto addr = loopback(port);
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return fd;
  if (fd >= 0) ::close(fd);
  return -1;
}

}  // namespace

BackgroundRun::BackgroundRun(std::vector<std::string> argv, ProcessOptions options) {
  options.whileRunning = [this](pid_t pid, double) {
    if (stopping_) ::kill(-pid, SIGKILL);  // the launcher, its workers: runProcess gave them one group
  };
  thread_ = std::thread([this, argv = std::move(argv), options] { result_ = runProcess(argv, options); });
}

BackgroundRun::~BackgroundRun() { stop(); }

const ProcessResult& BackgroundRun::finish() {
  if (thread_.joinable()) thread_.join();
  return result_;
}

void BackgroundRun::stop() {
  stopping_ = true;
  finish();
}

bool waitForListener(int port, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    int fd = connectTo(port);
    if (fd >= 0) {
      ::close(fd);
      return true;
    }
    ::usleep(20000);
  }
  return false;
}

SilentListener::SilentListener() { fd_ = listenOnLoopback(port_); }
SilentListener::~SilentListener() { ::close(fd_); }

GarbageServer::GarbageServer(std::vector<uint8_t> reply) {
  fd_ = listenOnLoopback(port_);
  thread_ = std::thread([this, reply = std::move(reply)] {
    while (!stopping_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      [[maybe_unused]] auto sent = ::send(client, reply.data(), reply.size(), MSG_NOSIGNAL);
      clients_.push_back(client);
    }
  });
}

GarbageServer::~GarbageServer() {
  stopping_ = true;
  thread_.join();
  for (int c : clients_) ::close(c);
  ::close(fd_);
}

RawClient::RawClient(int port) : fd_(connectTo(port)) {}
RawClient::~RawClient() {
  if (fd_ >= 0) ::close(fd_);
}

void RawClient::send(const std::vector<uint8_t>& bytes) {
  if (fd_ < 0) return;
  [[maybe_unused]] auto sent = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
}

std::vector<uint8_t> bytesOf(const std::string& text) { return {text.begin(), text.end()}; }

std::vector<uint8_t> randomBytes(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<uint8_t> out(n);
  for (auto& b : out) b = static_cast<uint8_t>(gen());
  return out;
}

}  // namespace balancenet::testing
