// `balancenet federate join`: its flags, their checks, the server's store reached with the job token, and the
// joining client.
#include "balancenet/cli/FederateJoinCommand.h"

#include <unistd.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "balancenet/cli/flags/DataFlags.h"
#include "balancenet/cli/flags/JobTokenFlags.h"
#include "balancenet/cli/flags/TrainFlags.h"
#include "balancenet/comm/HostAddress.h"
#include "balancenet/comm/Rendezvous.h"
#include "balancenet/core/CpuAllowance.h"
#include "balancenet/core/Error.h"
#include "balancenet/core/IntraOpThreads.h"
#include "balancenet/core/Logging.h"
#include "balancenet/core/ParseNumber.h"
#include "balancenet/federated/process/JoinClient.h"
#include "balancenet/job/JobDefaults.h"

namespace balancenet::cli {
namespace {

// HOST:PORT (the last colon splits them).
std::pair<std::string, int> parseServer(const std::string& text) {
  const auto colon = text.rfind(':');
  const std::string bad = fmt::format("--server must be HOST:PORT, got '{}'", text);
  require(colon != std::string::npos && colon > 0, bad);
  const auto port = parseInteger<int>(text.substr(colon + 1));
  require(port && *port >= 1 && *port <= 65535, bad);
  return {text.substr(0, colon), *port};
}

// A name goes into partition.csv and the server's log: letters, digits, '.', '_', '-'.
std::string checkedName(const std::string& name) {
  if (name.empty()) {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    return checkedName(fmt::format("{}-{}", host, ::getpid()));
  }
  for (char ch : name)
    require(std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-',
            fmt::format("--name may hold letters, digits, '.', '_' and '-' only, got '{}'", name));
  return name;
}

}  // namespace

void addJoinFlags(CLI::App& app, JoinFlags& f) {
  f.config = job::defaultJobConfig();
  f.config.threads = 0;  // not given: what this host allows
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--server", f.server, "The server's HOST:PORT (its `federate serve --port`)")->required();
  app.add_option("--name", f.name,
                 "This client's name (default HOST-PID): a client restarted with the same name gets its old id back");
  addDataFlags(app, f.config);
  app.get_option("--data")->description(
      "This client's own data, in any format train takes; it trains on the whole training split");
  app.add_option("--model", f.model,
                 "Optional: the model this client expects; the server refuses it when it trains another");
  auto* speed = app.add_option("--node-speed", f.nodeSpeed,
                               "Emulation: a local step of b samples lasts at least b / V seconds (samples/s)");
  auto* slow = app.add_option("--slowdown", f.slowdown, "Emulation: local steps last S x their real time (S >= 1)");
  speed->excludes(slow);
  app.add_option("--net-delay-ms", f.netDelayMs,
                 "Emulation: this client's link latency, added to every model message to or from it (ms)");
  app.add_option("--net-bandwidth-mbps", f.netBandwidthMbps,
                 "Emulation: this client's link speed in megabit/s: each task and update takes at least delay + bytes "
                 "x 8 / bandwidth, slept out beside the real transfer");
  app.add_option("--threads", f.config.threads, "Intra-op threads (default: what this host allows)");
  app.add_option("--iface", f.config.launch.iface, "Network interface for Gloo (default: from the server's address)");
  app.add_option("--rendezvous-timeout", f.rendezvousTimeoutS,
                 "Seconds to reach the server and to wait for its model record")
      ->capture_default_str();
  app.add_option("--log-level", f.config.logLevel, "trace, debug, info, warn, error")->capture_default_str();
  addJobTokenFlags(app, f.config, f.tokenFile);
}

int runJoin(JoinFlags& f) {
  auto& c = f.config;
  setupLogging(c.logLevel);
  const auto [host, port] = parseServer(f.server);
  require(c.launch.jobToken != kAutoJobToken,
          "--job-token auto is for the server, which makes the token up: give join the token it printed");
  require(f.nodeSpeed >= 0, fmt::format("--node-speed must be positive, got {}", f.nodeSpeed));
  require(f.slowdown == 0 || f.slowdown >= 1, fmt::format("--slowdown must be at least 1, got {}", f.slowdown));
  require(f.rendezvousTimeoutS > 0, fmt::format("--rendezvous-timeout must be positive, got {}", f.rendezvousTimeoutS));
  if (c.threads == 0) c.threads = threadsPerWorker(readCpuAllowance().cores(), 1);
  require(c.threads >= 1, fmt::format("--threads must be at least 1, got {}", c.threads));
  settleJobToken(c, f.tokenFile);
  federated::JoinSettings s;
  s.name = checkedName(f.name);
  s.data = c.data;
  s.objective = c.objective;
  s.model = f.model;
  if (f.nodeSpeed > 0) {
    s.paceMode = emulation::PaceMode::Paced;
    s.pace = f.nodeSpeed;
  } else if (f.slowdown > 0) {
    s.paceMode = emulation::PaceMode::Relative;
    s.pace = f.slowdown;
  }
  s.link = federated::parseClientLink(f.netDelayMs, f.netBandwidthMbps);
  s.where = fmt::format("{}:{}", host, port);
  s.timeout = fromSeconds(f.rendezvousTimeoutS);
  setIntraOpThreads(c.threads);

  comm::RendezvousOptions rv;
  rv.masterAddr = host;
  rv.masterPort = port;
  rv.jobToken = c.launch.jobToken;
  rv.insecureOpen = c.launch.insecureOpen;
  rv.iface = c.launch.iface;
  rv.timeout = s.timeout;
  s.channel.host = rv.glooHost();
  // Gloo listens where the server can reach this host: on the interface the kernel sends from toward the server
  // (--iface names another).
  s.channel.iface = rv.iface.empty() ? comm::interfaceTowardMaster(rv) : rv.iface;
  return federated::runJoinClient(s, comm::connectJobStore(rv));
}

}  // namespace balancenet::cli
