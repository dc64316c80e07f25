// HostAddress: the address by which the other hosts of a job know this process, so that a report about
// a missing peer can say on which machine to look.
#pragma once
#include <string>

#include "balancenet/comm/Rendezvous.h"

namespace balancenet::comm {

// This host's IPv4 address for the job of `options`: the address of `options.iface` when one is named
// (Gloo listens there), else the one the kernel would send from to reach the store. Empty for a job on
// one machine (a store file or a loopback store: there is only one host to look at) or when unknown.
std::string hostAddress(const RendezvousOptions& options);

// The name of the interface that holds IPv4 `address` ("" when none does), and of the first interface that is
// up, not loopback and IPv4 ("" when there is none). For a process that must listen where its peers reach it
// without being told --iface: Gloo is given the interface, not an address.
std::string interfaceWithAddress(const std::string& address);
std::string primaryInterface();

// The interface Gloo listens on when no --iface is given: the one holding the address the kernel sends from toward
// the master, as torchrun users expect ("" for a job on one machine, or when no route to the master is found).
std::string interfaceTowardMaster(const RendezvousOptions& options);

// The loopback address this host's name resolves to ("" when it resolves elsewhere or not at all). Containers and
// network namespaces share one hostname, and Debian maps it to 127.0.x.1: Gloo's default device then advertises an
// address that no other host can reach, and the job failed only at the rendezvous timeout.
std::string loopbackAddressOfHostName();

}  // namespace balancenet::comm
