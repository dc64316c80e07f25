// compare --federate: each run's federate command line, the labels, the table and chart from finished runs,
// and the whole loop with a stand-in for `balancenet federate` (a script writing a hand-made run directory).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "balancenet/cli/FederatedCompare.h"
#include "balancenet/core/Error.h"
#include "testing/FederatedRunDir.h"
#include "testing/TempDir.h"

namespace balancenet::cli {
namespace {

using Args = std::vector<std::string>;

TEST(FederatedCompare, FederateArgsStrategyAndRunDirThenSharedThenVariantFlags) {
  const auto variant = parseVariants({"deadline=--deadline-s 5"}).at(0);
  EXPECT_EQ(federateArgs("fedavg", variant, "out/fedavg-deadline", {"--clients", "8", "--deadline-s", "0"}),
            (Args{"federate", "--strategy", "fedavg", "--run-dir", "out/fedavg-deadline", "--clients", "8",
                  "--deadline-s", "0", "--deadline-s", "5"}));
  EXPECT_EQ(federateArgs("balanced", parseVariants({}).at(0), "o/balanced", {}),
            (Args{"federate", "--strategy", "balanced", "--run-dir", "o/balanced"}));
}

TEST(FederatedCompare, StrategyAndRunDirAreCompareOwn) {
  const auto none = parseVariants({}).at(0);
  EXPECT_THROW(federateArgs("fedavg", none, "d", {"--clients", "8", "--strategy", "fednova"}), UsageError);
  EXPECT_THROW(federateArgs("fedavg", none, "d", {"--run-dir=x"}), UsageError);
}

TEST(FederatedCompare, LabelsJoinStrategyAndVariantWhenThereAreSeveralStrategies) {
  const auto variant = parseVariants({"deadline=--deadline-s 5"}).at(0);
  EXPECT_EQ(runLabel("fedavg", variant, 3), "fedavg-deadline");
  EXPECT_EQ(runLabel("fedavg", variant, 1), "deadline");
  EXPECT_EQ(runLabel("fedavg", parseVariants({}).at(0), 3), "fedavg");
}

TEST(FederatedCompare, TableAndChartsFromFinishedRuns) {
  testing::TempDir out;
  testing::writeFederatedRun(out.file("balanced"), "balanced", 2.5);
  testing::writeFederatedRun(out.file("fedavg"), "fedavg", 10);
  const auto md =
      writeFederatedComparison({out.file("balanced"), out.file("fedavg")}, {"balanced", "fedavg"}, out.path());
  EXPECT_NE(md.find("| fedavg | fedavg | 0.1 | 3 | 30.0 | 30.0 | 2 | 30.0 | 2 | - | - |"), std::string::npos) << md;
  EXPECT_EQ(testing::readFile(out.file("compare.md")), md);
  const auto csv = testing::readFile(out.file("compare.csv"));
  EXPECT_EQ(csv.rfind("run,strategy,alpha,rounds,wall_s,s_to_70%", 0), 0u) << csv;
  EXPECT_NE(csv.find("\nbalanced,balanced,0.1,3,7.5,7.5,2,7.5,2,,,82.00,24.0,48.0,25.0\n"), std::string::npos) << csv;
  for (const char* png : {"accuracy_vs_wall_time.png", "client_steps_balanced.png", "client_steps_fedavg.png"}) {
    ASSERT_TRUE(std::filesystem::exists(out.file(png))) << png << ": gnuplot (Debian's gnuplot-nox) is required";
    EXPECT_GT(std::filesystem::file_size(out.file(png)), 1000u) << png;
  }
}

// A stand-in for this program: `federate --strategy S --run-dir D ...` copies the template run into D with
// S as its strategy and keeps its arguments; strategy "broken" fails as a federate run with bad input would.
std::string writeFakeSelf(const testing::TempDir& dir) {
  testing::writeFederatedRun(dir.file("template"), "STRATEGY");
  const auto path = dir.file("fake-balancenet");
  std::ofstream(path) << "#!/bin/sh\n"
                         "strategy=$3 run=$5\n"
                         "[ \"$strategy\" = broken ] && { echo 'balancenet: error: unknown --strategy' >&2; exit 2; }\n"
                         "cp "
                      << dir.file("template")
                      << "/rounds.csv \"$run/\"\n"
                         "sed \"s/STRATEGY/$strategy/\" "
                      << dir.file("template")
                      << "/summary.json > \"$run/summary.json\"\n"
                         "echo \"$@\" > \"$run/args.txt\"\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

TEST(FederatedCompare, RunsEachStrategyAndVariantInItsOwnDirectory) {
  testing::TempDir dir;
  CompareOptions o;
  o.federate = true;
  o.strategies = {"fedavg", "balanced"};
  o.variants = {"deadline=--deadline-s 5"};
  o.trainFlags = {"--clients", "2", "--rounds", "3"};
  o.outDir = dir.file("out");
  ASSERT_EQ(runFederatedCompare(o, writeFakeSelf(dir)), 0);
  EXPECT_EQ(testing::readFile(dir.file("out/balanced-deadline/args.txt")),
            "federate --strategy balanced --run-dir " + dir.file("out/balanced-deadline") +
                " --clients 2 --rounds 3 --deadline-s 5\n");
  const auto csv = testing::readFile(dir.file("out/compare.csv"));
  EXPECT_NE(csv.find("\nfedavg-deadline,fedavg,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nbalanced-deadline,balanced,"), std::string::npos) << csv;
  EXPECT_TRUE(std::filesystem::exists(dir.file("out/accuracy_vs_wall_time.png")));
}

TEST(FederatedCompare, AFailedRunNamesItselfAndItsLastLogLine) {
  testing::TempDir dir;
  CompareOptions o;
  o.federate = true;
  o.strategies = {"fedavg", "broken"};
  o.outDir = dir.file("out");
  try {
    runFederatedCompare(o, writeFakeSelf(dir));
    FAIL() << "a failed federate run went unnoticed";
  } catch (const RuntimeFailure& e) {
    EXPECT_EQ(std::string(e.what()), "broken failed (exit 2): balancenet: error: unknown --strategy (log: " +
                                         dir.file("out/broken/federate.log") + ")");
  }
  EXPECT_TRUE(std::filesystem::exists(dir.file("out/fedavg/summary.json")));  // the runs before it stay
}

TEST(FederatedCompare, StrategiesWithoutFederateIsAUsageError) {
  testing::TempDir dir;
  CompareOptions o;
  o.strategies = {"fedavg"};
  o.outDir = dir.file("out");
  EXPECT_THROW(runCompare(o, "/bin/false"), UsageError);
  EXPECT_FALSE(std::filesystem::exists(dir.file("out")));  // refused before any run
}

}  // namespace
}  // namespace balancenet::cli
