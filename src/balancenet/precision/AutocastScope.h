// AutocastScope: libtorch's autocast around one forward pass and its loss, the C++ form of Python's
// `with torch.autocast(device_type, dtype)`: on at entry, the previous state back at exit, and the cache of cast
// weights cleared when the outermost scope ends (as Python's exit does), so the next step never reuses a cast of
// weights the optimiser has since changed. Fp32: nothing happens.
#pragma once
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

#include "balancenet/precision/Precision.h"

namespace balancenet::precision {

class AutocastScope {
 public:
  AutocastScope(Precision precision, c10::DeviceType device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false;
  c10::DeviceType device_;
  bool wasEnabled_ = false;
  c10::ScalarType previousType_ = c10::ScalarType::Float;
};

}  // namespace balancenet::precision
