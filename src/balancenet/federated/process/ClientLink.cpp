// A federated client's emulated link: its transfer time and the sleep that stands for it.
#include "balancenet/federated/process/ClientLink.h"

#include <chrono>
#include <thread>

#include "balancenet/emulation/FactorSchedule.h"
#include "balancenet/emulation/LinkTime.h"
#include "balancenet/federated/process/UpdateMessage.h"

namespace balancenet::federated {

ClientLink clientLinkOf(const std::vector<double>& delayMs, const std::vector<double>& bandwidthMbps, int client) {
  ClientLink link;
  if (!delayMs.empty()) link.delayMs = delayMs.at(static_cast<size_t>(client));
  if (!bandwidthMbps.empty()) link.bandwidthMbps = bandwidthMbps.at(static_cast<size_t>(client));
  return link;
}

ClientLink parseClientLink(const std::string& delayMs, const std::string& bandwidthMbps) {
  auto one = [](const char* flag, const std::string& text) {
    return text.empty() ? 0.0 : emulation::FactorSchedule::perNode(flag, text, 1, /*allowZero=*/true).at(0);
  };
  return {one("--net-delay-ms", delayMs), one("--net-bandwidth-mbps", bandwidthMbps)};
}

int64_t messageBytes(int64_t modelSize) {
  return kHeaderSlots * static_cast<int64_t>(sizeof(double)) + modelSize * static_cast<int64_t>(sizeof(float));
}

double transferSeconds(const ClientLink& link, int64_t bytes) {
  return emulation::linkTransferSeconds(link.delayMs, link.bandwidthMbps, bytes);
}

void emulateTransfer(const ClientLink& link, int64_t bytes) {
  if (!link.emulated()) return;
  std::this_thread::sleep_for(std::chrono::duration<double>(transferSeconds(link, bytes)));
}

}  // namespace balancenet::federated
