#include "balancenet/precision/AutocastScope.h"

#include <ATen/autocast_mode.h>

namespace balancenet::precision {

AutocastScope::AutocastScope(Precision precision, c10::DeviceType device)
    : active_(precision != Precision::Fp32), device_(device) {
  if (!active_) return;
  wasEnabled_ = at::autocast::is_autocast_enabled(device_);
  previousType_ = at::autocast::get_autocast_dtype(device_);
  at::autocast::set_autocast_dtype(device_, lowType(precision));
  at::autocast::set_autocast_enabled(device_, true);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_autocast_enabled(device_, wasEnabled_);
  at::autocast::set_autocast_dtype(device_, previousType_);
}

}  // namespace balancenet::precision
