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

namespace balancenet::comm {
namespace {

std::string text(const sockaddr_in& address) {
  char buf[INET_ADDRSTRLEN] = {};
  return inet_ntop(AF_INET, &address.sin_addr, buf, sizeof buf) ? buf : "";
}

std::string interfaceAddress(const std::string& iface) {
  ifaddrs* all = nullptr;
  if (getifaddrs(&all) != 0) return "";
  std::string out;
  for (const ifaddrs* a = all; a && out.empty(); a = a->ifa_next)
    if (a->ifa_addr && a->ifa_addr->sa_family == AF_INET && iface == a->ifa_name)
      out = text(*reinterpret_cast<const sockaddr_in*>(a->ifa_addr));
  freeifaddrs(all);
  return out;
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
  ifaddrs* all = nullptr;
  if (address.empty() || getifaddrs(&all) != 0) return "";
  std::string out;
  for (const ifaddrs* a = all; a && out.empty(); a = a->ifa_next)
    if (a->ifa_addr && a->ifa_addr->sa_family == AF_INET &&
        text(*reinterpret_cast<const sockaddr_in*>(a->ifa_addr)) == address)
      out = a->ifa_name;
  freeifaddrs(all);
  return out;
}

std::string primaryInterface() {
  ifaddrs* all = nullptr;
  if (getifaddrs(&all) != 0) return "";
  std::string out;
  for (const ifaddrs* a = all; a && out.empty(); a = a->ifa_next)
    if (a->ifa_addr && a->ifa_addr->sa_family == AF_INET && (a->ifa_flags & IFF_UP) && !(a->ifa_flags & IFF_LOOPBACK))
      out = a->ifa_name;
  freeifaddrs(all);
  return out;
}

std::string hostAddress(const RendezvousOptions& o) {
  if (!o.storeFile.empty() || isLoopback(o.masterAddr)) return "";
  return o.iface.empty() ? sourceAddressToward(o.masterAddr, o.masterPort) : interfaceAddress(o.iface);
}

}  // namespace balancenet::comm
