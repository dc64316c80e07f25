// FederatedRunDir: a federated run directory written by hand (rounds.csv and summary.json in the formats of
// federated/RoundLog.h), for the tests of what reads them back (report, compare --federate).
#pragma once
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

namespace balancenet::testing {

// Two clients, three rounds of `roundSeconds` each, evaluated after rounds 0 and 2 (61% and 82%); client 1
// was late in round 0 (6 of 10 steps). `alphaJson` is summary.json's alpha as written ("0.1", "null", ...).
inline void writeFederatedRun(const std::string& dir, const std::string& strategy, double roundSeconds = 2.5,
                              const std::string& alphaJson = "0.1") {
  std::filesystem::create_directories(dir);
  const double t0 = roundSeconds, t1 = 2 * roundSeconds, t2 = 3 * roundSeconds;
  std::ofstream(dir + "/rounds.csv")
      << "round,wall_s,round_s,test_accuracy,test_loss,client,assigned_steps,done_steps,samples,upload_bytes,seconds,"
         "compute_s,staleness,status\n"
      << fmt::format("0,{0},{0},0.61,1.1,0,10,10,320,4000,2.4,2.0,0,ok\n", t0)
      << fmt::format("0,{0},{0},0.61,1.1,1,10,6,192,4000,2.5,2.4,0,late\n", t0)
      << fmt::format("1,{},{},,,0,12,12,384,4000,2.4,2.0,0,ok\n", t1, roundSeconds)
      << fmt::format("1,{},{},,,1,8,8,256,4000,2.4,2.3,0,ok\n", t1, roundSeconds)
      << fmt::format("2,{},{},0.82,0.5,0,12,12,384,4000,2.4,2.0,0,ok\n", t2, roundSeconds)
      << fmt::format("2,{},{},0.82,0.5,1,8,8,256,4000,2.4,2.3,0,ok\n", t2, roundSeconds);
  std::ofstream(dir + "/summary.json") << fmt::format(
      R"({{"kind": "federated", "strategy": "{}", "clients": 2, "rounds": 3, "wall_seconds": {}, )"
      R"("final_accuracy": 0.82, "time_to_accuracy": {{"0.70": {{"seconds": {}, "round": 2}}, )"
      R"("0.80": {{"seconds": {}, "round": 2}}, "0.85": null}}, "upload_bytes": 24000000, )"
      R"("download_bytes": 48000000, "client_idle_fraction": 0.25, "alpha": {}, "deadline_s": 5, )"
      R"("local_steps": "10"}})",
      strategy, t2, t2, t2, alphaJson);
}

}  // namespace balancenet::testing
