// RendezvousPeers: what can sit on the other side of a job's rendezvous port in a test: a job running in
// the background, a socket that never answers, a server that answers garbage, a client that sends it.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "testing/ProcessRunner.h"

namespace balancenet::testing {

// A process run on its own thread; killed (its whole process group) when stopped or destroyed.
class BackgroundRun {
 public:
  BackgroundRun(std::vector<std::string> argv, ProcessOptions options);
  ~BackgroundRun();
  BackgroundRun(const BackgroundRun&) = delete;
  BackgroundRun& operator=(const BackgroundRun&) = delete;
  // Waits for the process to end by itself (its kill timer still applies).
  const ProcessResult& finish();
  void stop();

 private:
  std::atomic<bool> stopping_{false};
  ProcessResult result_;
  std::thread thread_;
};

// Whether something accepts TCP connections on 127.0.0.1:port within `seconds`.
bool waitForListener(int port, double seconds);

// A socket bound and listening on 127.0.0.1 that never accepts: the port is taken, and a client's connect
// succeeds (the kernel queues it) but nothing ever answers.
class SilentListener {
 public:
  SilentListener();
  ~SilentListener();
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// Accepts every connection on 127.0.0.1 and answers it with `reply`, then holds it open.
class GarbageServer {
 public:
  explicit GarbageServer(std::vector<uint8_t> reply);
  ~GarbageServer();
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::vector<int> clients_;
  std::thread thread_;
};

// A TCP connection to 127.0.0.1:port, open while the object lives.
class RawClient {
 public:
  explicit RawClient(int port);
  ~RawClient();
  bool connected() const { return fd_ >= 0; }
  void send(const std::vector<uint8_t>& bytes);

 private:
  int fd_ = -1;
};

std::vector<uint8_t> bytesOf(const std::string& text);
std::vector<uint8_t> randomBytes(size_t n, uint32_t seed);

}  // namespace balancenet::testing
