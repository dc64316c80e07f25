// ResumePoint: what a session's member with the newest committed state hands the others when its group forms anew
// (elastic/GroupReform.h): its steps done, its next global batch and the Python package's state, in one message.
#pragma once
#include <cstdint>
#include <string>

namespace balancenet::session {

struct ResumePoint {
  int64_t step = 0;   // steps done
  int64_t batch = 0;  // the next global batch
  std::string state;  // setCommittedState's bytes (empty: none set)
};

std::string encodeResumePoint(const ResumePoint& point);
// RuntimeFailure when `bytes` is shorter than the two numbers.
ResumePoint decodeResumePoint(const std::string& bytes);

}  // namespace balancenet::session
