// Security of the rendezvous: a local job listens on loopback only and keeps its store in a private
// file; a job over several machines admits only processes with its token; strangers on the store port
// leave the job running or fail it with one line, never hang it.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "BinaryFixture.h"
#include "RendezvousPeers.h"

namespace balancenet::testing {
namespace {

struct TcpSocket {
  std::string address;  // the local one, as /proc/net/tcp{,6} writes it (hex, host byte order per 32-bit word)
  bool ipv6 = false;
  bool listening = false;
  bool loopback() const {
    if (!ipv6) return address.size() == 8 && address.substr(6, 2) == "7F";                          // 127.x.x.x
    return address == "00000000000000000000000001000000" ||                                         // ::1
           (address.substr(0, 24) == "0000000000000000FFFF0000" && address.substr(30, 2) == "7F");  // ::ffff:127.x
  }
};

// The TCP sockets (listening or connected) of `pids`, matched by inode through /proc/<pid>/fd.
std::vector<TcpSocket> tcpSockets(const std::vector<pid_t>& pids) {
  std::set<std::string> inodes;
  for (pid_t pid : pids) {
    std::error_code ec;
    for (const auto& fd : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
      const auto target = std::filesystem::read_symlink(fd.path(), ec).string();
      if (target.rfind("socket:[", 0) == 0) inodes.insert(target.substr(8, target.size() - 9));
    }
  }
  std::vector<TcpSocket> out;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
      if (inodes.count(inode))
        out.push_back({local.substr(0, local.find(':')), std::strcmp(table, "/proc/net/tcp6") == 0, state == "0A"});
    }
  }
  return out;
}

class RendezvousSecurity : public BinaryFixture {
 protected:
  // Node `rank` of a two-machine job, both on this machine, meeting at `port` over the TCP store.
  std::vector<std::string> nodeCommand(int rank, int port, const std::vector<std::string>& more = {}) {
    std::vector<std::string> flags{"--nnodes",
                                   "2",
                                   "--node-rank",
                                   std::to_string(rank),
                                   "--master-port",
                                   std::to_string(port),
                                   "--model",
                                   "mlp",
                                   "--global-batch",
                                   "16",
                                   "--steps",
                                   "3",
                                   "--progress-seconds",
                                   "0"};
    flags.insert(flags.end(), more.begin(), more.end());
    return trainCommand(dataDir_, dir_.file("run-node" + std::to_string(rank)), flags);
  }
  ProcessOptions withToken(const std::string& token, double timeoutSeconds = 60) {
    ProcessOptions o;
    if (!token.empty()) o.env["BALANCENET_JOB_TOKEN"] = token;
    o.timeoutSeconds = timeoutSeconds;
    return o;
  }
};

TEST_F(RendezvousSecurity, LocalJobUsesLoopbackOnlyAndKeepsItsStorePrivate) {
  // Even with --master-addr 0.0.0.0: a single-machine job has nothing to offer to other machines.
  const std::string tmp = dir_.file("tmp");
  std::filesystem::create_directories(tmp);
  ProcessOptions o;
  o.env["TMPDIR"] = tmp;
  o.timeoutSeconds = 120;
  std::vector<TcpSocket> sockets, launcherSockets;
  std::vector<std::string> storeDirs;
  bool stopped = false;
  // Sampled every ~50 ms from the start: Gloo listens only while its connections form, then they stay.
  o.whileRunning = [&](pid_t launcher, double elapsed) {
    auto processes = childrenOf(launcher);
    processes.push_back(launcher);
    const auto own = tcpSockets({launcher});
    launcherSockets.insert(launcherSockets.end(), own.begin(), own.end());
    const auto all = tcpSockets(processes);
    sockets.insert(sockets.end(), all.begin(), all.end());
    const bool connected = std::any_of(all.begin(), all.end(), [](const TcpSocket& s) { return !s.listening; });
    if (stopped || processes.size() < 4 || !connected) return;  // 2 workers and a server, Gloo connected
    stopped = true;
    for (const auto& entry : std::filesystem::directory_iterator(tmp)) {
      storeDirs.push_back(entry.path().string());
      struct stat st {};
      ::stat(entry.path().c_str(), &st);
      EXPECT_EQ(st.st_mode & 0777, 0700u) << entry.path() << " is open to other users";
    }
    ::kill(launcher, SIGINT);
  };
  const auto r = train({"--nodes", "2", "--comm", "ps", "--ps", "1", "--model", "mlp", "--global-batch", "16",
                        "--steps", "1000000", "--progress-seconds", "0", "--master-addr", "0.0.0.0"},
                       o);
  ASSERT_TRUE(stopped) << "the job never had its workers and server up:\n" << r.output;
  EXPECT_EQ(r.exitCode, 130) << r.output;
  EXPECT_TRUE(launcherSockets.empty()) << "the launcher of a local job has a TCP socket (a store port?)";
  EXPECT_FALSE(sockets.empty()) << "no TCP socket seen at all: Gloo's connections should be there";
  for (const auto& s : sockets)
    EXPECT_TRUE(s.loopback()) << (s.listening ? "listening" : "connected") << " on " << s.address
                              << (s.ipv6 ? " (v6)" : "");
  EXPECT_EQ(storeDirs.size(), 1u) << "expected one private store directory under TMPDIR";
  EXPECT_TRUE(std::filesystem::is_empty(tmp)) << "the private store was not removed";
}

TEST_F(RendezvousSecurity, NodesWithTheSameTokenTrainTogetherOverTheTcpStore) {
  const int port = freePort();
  const std::string token = "3b9e0d5c1a7f4e2d8c6b0a9f1e3d5c7b";
  BackgroundRun node0(nodeCommand(0, port), withToken(token));
  ASSERT_TRUE(waitForListener(port, 30)) << "node 0 never served the store on port " << port;
  const auto node1 = runProcess(nodeCommand(1, port), withToken(token));
  const auto& first = node0.finish();
  EXPECT_EQ(first.exitCode, 0) << first.output;
  EXPECT_EQ(node1.exitCode, 0) << node1.output;
  EXPECT_TRUE(std::filesystem::exists(dir_.file("run-node0/steps.csv"))) << first.output;
  EXPECT_EQ(first.output.find("admits any process"), std::string::npos) << "a job with a token warned it is open";
}

// Closed by default. 0.0.0.0 is not a loopback address, yet reaches this machine (Gloo on lo): a job "beyond
// loopback" that runs here.
std::vector<std::string> beyondLoopback(std::vector<std::string> more = {}) {
  more.insert(more.begin(), {"--master-addr", "0.0.0.0", "--iface", "lo"});
  return more;
}

TEST_F(RendezvousSecurity, HostBeyondLoopbackWithoutATokenIsRefusedBeforeItWaitsForTheStore) {
  // Node 1 would wait up to the rendezvous timeout for a store nobody serves; it must not even try.
  const int port = freePort();
  const auto r = runProcess(nodeCommand(1, port, {"--master-addr", "203.0.113.7", "--rendezvous-timeout", "60"}),
                            withToken("", 40));
  expectOneLineError(r,
                     "the job's store at 203.0.113.7:" + std::to_string(port) +
                         " is reachable from other hosts and this process has no job token: give every process the "
                         "job's token with --job-token-file FILE, BALANCENET_JOB_TOKEN or --job-token TOKEN",
                     2);
  EXPECT_NE(r.output.find("--insecure-open-job"), std::string::npos) << r.output;
  EXPECT_LT(r.seconds, 15) << "refused only after waiting for the store";
}

TEST_F(RendezvousSecurity, InsecureOpenJobTrainsBeyondLoopbackAndSaysItIsOpen) {
  const int port = freePort();
  BackgroundRun node0(nodeCommand(0, port, beyondLoopback({"--insecure-open-job"})), withToken(""));
  ASSERT_TRUE(waitForListener(port, 30)) << "node 0 never served the store on port " << port;
  const auto node1 = runProcess(nodeCommand(1, port, beyondLoopback({"--insecure-open-job"})), withToken(""));
  const auto& first = node0.finish();
  EXPECT_EQ(first.exitCode, 0) << first.output;
  EXPECT_EQ(node1.exitCode, 0) << node1.output;
  EXPECT_NE(first.output.find("admits any process that reaches it"), std::string::npos) << first.output;
}

// --job-token auto on node 0: the token it prints, written to a private file, admits node 1.
TEST_F(RendezvousSecurity, AutoTokenPrintedByTheStoresHostAdmitsAHostGivenItInAFile) {
  const int port = freePort();
  std::mutex mutex;
  std::string printed;
  ProcessOptions o = withToken("");
  o.onOutput = [&](const std::string& output, double) {
    const std::string key = "export BALANCENET_JOB_TOKEN=";
    const auto at = output.find(key);
    if (at == std::string::npos || output.find('\n', at) == std::string::npos) return;
    std::lock_guard<std::mutex> lock(mutex);
    printed = output.substr(at + key.size(), output.find('\n', at) - at - key.size());
  };
  BackgroundRun node0(nodeCommand(0, port, beyondLoopback({"--job-token", "auto"})), o);
  ASSERT_TRUE(waitForListener(port, 30)) << "node 0 never served the store on port " << port;
  std::string token;
  for (int i = 0; i < 200 && token.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::lock_guard<std::mutex> lock(mutex);
    token = printed;
  }
  ASSERT_EQ(token.size(), 32u) << "node 0 printed no token: '" << token << "'";
  const std::string file = dir_.file("job-token");
  { std::ofstream(file) << token << "\n"; }
  std::filesystem::permissions(file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const auto node1 = runProcess(nodeCommand(1, port, beyondLoopback({"--job-token-file", file})), withToken(""));
  const auto& first = node0.finish();
  EXPECT_EQ(first.exitCode, 0) << first.output;
  EXPECT_EQ(node1.exitCode, 0) << node1.output;
  EXPECT_EQ(first.output.find("admits any process"), std::string::npos) << "a job with a token warned it is open";
  size_t shown = 0;  // once: node 0's workers take the launcher's token from their environment
  for (auto at = first.output.find(token); at != std::string::npos; at = first.output.find(token, at + 1)) ++shown;
  EXPECT_EQ(shown, 2u) << "the token should appear once, in the two lines that tell how to give it:\n" << first.output;
  EXPECT_EQ(node1.output.find(token), std::string::npos) << "node 1 showed the token";
}

// What a stranger writes to the store port before the job's other node arrives, then hangs up.
struct Garbage {
  const char* name;
  std::vector<uint8_t> bytes;
};

class StrangerOnTheStorePort : public RendezvousSecurity, public ::testing::WithParamInterface<Garbage> {};

TEST_P(StrangerOnTheStorePort, LeavesTheJobUnharmed) {
  const int port = freePort();
  BackgroundRun node0(nodeCommand(0, port), withToken(""));
  ASSERT_TRUE(waitForListener(port, 30));
  {
    RawClient stranger(port);
    ASSERT_TRUE(stranger.connected());
    stranger.send(GetParam().bytes);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  const auto node1 = runProcess(nodeCommand(1, port), withToken(""));
  const auto& first = node0.finish();
  EXPECT_EQ(first.exitCode, 0) << first.output;
  EXPECT_EQ(node1.exitCode, 0) << node1.output;
  EXPECT_NE(first.output.find("admits any process that reaches it"), std::string::npos)
      << "a job without a token must say that it is open:\n"
      << first.output;
}

// A c10d 1.13 store message: one byte of query type (0 is SET), then a length-prefixed key.
std::vector<uint8_t> halfASetMessage() {
  std::vector<uint8_t> m{0, 0xe8, 0x03, 0, 0, 0, 0, 0, 0};  // SET, a key of 1000 bytes (little endian)...
  const std::string arrived(10, 'k');                       // ... of which 10 arrive
  m.insert(m.end(), arrived.begin(), arrived.end());
  return m;
}

INSTANTIATE_TEST_SUITE_P(Garbage, StrangerOnTheStorePort,
                         ::testing::Values(Garbage{"HttpRequest",
                                                   bytesOf("GET / HTTP/1.1\r\nHost: balancenet\r\n\r\n")},
                                           Garbage{"RandomBytes", randomBytes(4096, 2024)},
                                           Garbage{"ZeroBytes", std::vector<uint8_t>(4096, 0)},
                                           Garbage{"HalfAMessageThenHangUp", halfASetMessage()}),
                         [](const ::testing::TestParamInfo<Garbage>& info) { return std::string(info.param.name); });

TEST_F(RendezvousSecurity, StrangerHoldingHalfAMessageDoesNotStallTheJob) {
  // c10d 1.13's store served one request at a time and waited for the rest of this one forever (the job
  // failed at its rendezvous timeout); 2.x's libuv store reads each connection on its own, so the job trains.
  const int port = freePort();
  BackgroundRun node0(nodeCommand(0, port, {"--rendezvous-timeout", "5"}), withToken("", 60));
  ASSERT_TRUE(waitForListener(port, 30));
  RawClient stranger(port);
  ASSERT_TRUE(stranger.connected());
  stranger.send(halfASetMessage());
  const auto node1 = runProcess(nodeCommand(1, port, {"--rendezvous-timeout", "5"}), withToken("", 60));
  const auto& first = node0.finish();
  for (const auto* r : {&first, &node1}) {
    EXPECT_EQ(r->exitCode, 0) << r->output;
    EXPECT_NE(r->output.find("balancenet: done"), std::string::npos) << r->output;
  }
  EXPECT_NE(first.output.find("final test accuracy"), std::string::npos) << first.output;
}

TEST_F(RendezvousSecurity, SecondWorkerWithTheSameRankIsRefused) {
  const int port = freePort();
  auto worker = [&](int rank) {
    ProcessOptions o;
    o.env = {{"RANK", std::to_string(rank)},
             {"WORLD_SIZE", "3"},
             {"MASTER_ADDR", "127.0.0.1"},
             {"MASTER_PORT", std::to_string(port)}};
    o.timeoutSeconds = 40;
    return std::make_unique<BackgroundRun>(
        trainCommand(dataDir_, dir_.file("run"), {"--model", "mlp", "--steps", "2", "--rendezvous-timeout", "4"}), o);
  };
  auto rank0 = worker(0);
  ASSERT_TRUE(waitForListener(port, 30));
  auto first = worker(1), second = worker(1);
  const ProcessResult* refused = nullptr;
  for (const auto* r : {&first->finish(), &second->finish()})
    if (r->output.find("rank 1 has already joined") != std::string::npos) refused = refused ? nullptr : r;
  ASSERT_NE(refused, nullptr) << "exactly one of the two rank-1 workers must be refused:\n"
                              << first->finish().output << "\n---\n"
                              << second->finish().output;
  expectOneLineError(*refused, "rank 1 has already joined the job at 127.0.0.1:" + std::to_string(port), 2);
  // Rank 2 never comes: the others stop at the rendezvous timeout, named.
  expectOneLineError(rank0->finish(), "rank(s) 2 of 3 never arrived", 1);
}

}  // namespace
}  // namespace balancenet::testing
