// LrSchedule: learning rate as a pure function of the step (linear warm-up, then constant/cosine/step decay).
#pragma once
#include <cstdint>
#include <string>
#include "balancenet/core/FieldList.h"

namespace balancenet::trainer {

struct LrSchedule {
  enum class Decay { Constant, Cosine, Step };
  double baseLr = 0.05;
  int64_t warmupSteps = 0;  // lr rises linearly from baseLr/warmupSteps to baseLr
  Decay decay = Decay::Constant;
  int64_t totalSteps = 1;  // cosine reaches minLr here
  double minLr = 0;
  int64_t stepEvery = 1000;  // step decay: multiply by gamma every stepEvery steps after warm-up
  double gamma = 0.1;

  double at(int64_t step) const;                     // step counts from 0
  static Decay parseDecay(const std::string& name);  // constant|cosine|step; UsageError otherwise

  // The fields a launcher sends its workers (core/FieldList.h): every one.
  BALANCENET_FIELDS(baseLr, warmupSteps, decay, totalSteps, minLr, stepEvery, gamma);
};
BALANCENET_CHECK_FIELDS(LrSchedule);

}  // namespace balancenet::trainer
