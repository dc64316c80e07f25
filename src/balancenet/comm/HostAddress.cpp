// Finding this host's address without sending anything: getifaddrs for a named interface, else a UDP
// socket connected to the store (connect on UDP only picks the route and the source address).
#include "balancenet/comm/HostAddress.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <utility>

namespace balancenet::comm {
namespace {

std::string text(const sockaddr_in& address) {
  char buf[INET_ADDRSTRLEN] = {};
  return inet_ntop(AF_INET, &address.sin_addr, buf, sizeof buf) ? buf : "";
}

// The first IPv4 interface for which `pick(name, address, flags)` says yes, as {name, address}; empty when none.
template <typename Pick>
std::pair<std::string, std::string> firstInterface(const Pick& pick) {
  ifaddrs* all = nullptr;
  if (getifaddrs(&all) != 0) return {};
  std::pair<std::string, std::string> out;
  for (const ifaddrs* a = all; a && out.first.empty(); a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
    const std::string address = text(*reinterpret_cast<const sockaddr_in*>(a->ifa_addr));
    if (pick(std::string(a->ifa_name), address, a->ifa_flags)) out = {a->ifa_name, address};
  }
  freeifaddrs(all);
  return out;
}

std::string interfaceAddress(const std::string& iface) {
  return firstInterface([&](const std::string& name, const std::string&, unsigned) { return name == iface; }).second;
}

std::string sourceAddressToward(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* to = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &to) != 0) return "";
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in from{};
  socklen_t length = sizeof from;
  const bool ok = fd >= 0 && ::connect(fd, to->ai_addr, to->ai_addrlen) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&from), &length) == 0;
  if (fd >= 0) ::close(fd);
  freeaddrinfo(to);
  return ok ? text(from) : "";
}

}  // namespace

std::string interfaceWithAddress(const std::string& address) {
  if (address.empty()) return "";
  return firstInterface([&](const std::string&, const std::string& a, unsigned) { return a == address; }).first;
}

std::string primaryInterface() {
  return firstInterface([](const std::string&, const std::string&, unsigned flags) {
           return (flags & IFF_UP) && !(flags & IFF_LOOPBACK);
         })
      .first;
}

std::string interfaceTowardMaster(const RendezvousOptions& o) {
  if (o.onOneMachine()) return "";
  return interfaceWithAddress(sourceAddressToward(o.masterAddr, o.masterPort));
}

std::string loopbackAddressOfHostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* found = nullptr;
  if (getaddrinfo(name, nullptr, &hints, &found) != 0) return "";
  const std::string address = text(*reinterpret_cast<const sockaddr_in*>(found->ai_addr));
  freeaddrinfo(found);
  return isLoopback(address) ? address : "";
}

std::string hostAddress(const RendezvousOptions& o) {
  if (o.onOneMachine()) return "";
  return o.iface.empty() ? sourceAddressToward(o.masterAddr, o.masterPort) : interfaceAddress(o.iface);
}

}  // namespace balancenet::comm
