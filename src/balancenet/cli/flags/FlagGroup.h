// FlagGroup: the names every flag group's header (<Group>Flags.h) uses without including them: CLI11's App and
// Option, the job its checks fill, and train's raw values (TrainFlags.h) for the checks that span groups.
#pragma once

namespace CLI {
class App;
class Option;
}  // namespace CLI
namespace balancenet::job {
struct JobConfig;
}
namespace balancenet::cli {
struct RawFlags;
}
