// DeviceOptions: where a job's workers compute (--device, --devices) and which engine sums their gradients
// (--backend). Read by the worker at start (GpuSupport.h) and by the group that forms (GroupBackend.h).
#pragma once
#include <string>
#include <vector>
#include "balancenet/core/FieldList.h"

namespace balancenet::device {

struct DeviceOptions {
  // --device: auto (the local rank's GPU where the host has one, else the CPU), cpu, cuda or cuda:N.
  std::string device = "auto";
  // --devices: one entry per worker of this host, by local rank ("cuda:0", "cuda", "cpu"); empty: --device for all.
  std::vector<std::string> devices;
  // --backend: auto (NCCL where every worker of the group has a GPU of its own, else Gloo), gloo or nccl.
  std::string backend = "auto";

  // The fields a launcher sends its workers (core/FieldList.h): every one.
  BALANCENET_FIELDS(device, devices, backend);
};
BALANCENET_CHECK_FIELDS(DeviceOptions);

}  // namespace balancenet::device
