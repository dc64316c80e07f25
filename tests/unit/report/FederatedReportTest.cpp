// Federated runs read back: rounds.csv and summary.json, the federated table, the charts, and the report page
// (federated alone and mixed with training runs).
#include <gtest/gtest.h>

#include <fstream>

#include "PipelineFixture.h"
#include "balancenet/core/Error.h"
#include "balancenet/report/FederatedCharts.h"
#include "balancenet/report/FederatedResults.h"
#include "balancenet/report/HtmlReport.h"
#include "testing/FederatedRunDir.h"
#include "testing/HtmlPages.h"
#include "testing/TempDir.h"

namespace balancenet::report {
namespace {

TEST(FederatedResults, ReadsRoundsClientsAndEvaluations) {
  testing::TempDir dir;
  testing::writeFederatedRun(dir.file("run"), "balanced");
  const auto run = loadFederatedRun(dir.file("run"));
  EXPECT_TRUE(isFederatedSummary(run.summary));
  EXPECT_EQ(run.label(), "run (balanced)");
  EXPECT_EQ(loadFederatedRun(dir.file("run") + "/").label(), "run (balanced)");  // as `runs/*/` names it
  ASSERT_EQ(run.rounds.size(), 3u);
  EXPECT_EQ(run.rounds[1].round, 1);
  EXPECT_DOUBLE_EQ(run.rounds[1].wallSeconds, 5.0);
  EXPECT_FALSE(run.rounds[1].testAccuracy.has_value());  // not evaluated after round 1
  ASSERT_TRUE(run.rounds[2].testAccuracy.has_value());
  EXPECT_DOUBLE_EQ(*run.rounds[2].testAccuracy, 0.82);
  ASSERT_EQ(run.rounds[0].clients.size(), 2u);
  EXPECT_EQ(run.rounds[0].clients[1].client, 1);
  EXPECT_EQ(run.rounds[0].clients[1].assignedSteps, 10);
  EXPECT_EQ(run.rounds[0].clients[1].doneSteps, 6);
  EXPECT_EQ(run.rounds[0].clients[1].status, "late");
}

TEST(FederatedResults, ATrainingRunIsNotFederated) {
  EXPECT_FALSE(isFederatedSummary(nlohmann::json{{"model", "cnn"}, {"steps", 20}}));
  EXPECT_FALSE(isFederatedSummary(nlohmann::json{{"kind", "train"}}));
  EXPECT_TRUE(isFederatedSummary(nlohmann::json{{"kind", "federated"}}));
}

TEST(FederatedResults, MissingOrMalformedRoundsCsvIsAUsageErrorNamingTheFile) {
  testing::TempDir dir;
  testing::writeFederatedRun(dir.file("run"), "fedavg");
  fixture::writeText(dir.file("run/rounds.csv"), "round,wall_s\n0,1\n");
  try {
    loadFederatedRun(dir.file("run"));
    FAIL() << "a rounds.csv without the client columns was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("rounds.csv: no column 'test_accuracy'"), std::string::npos) << e.what();
  }
  testing::writeFederatedRun(dir.file("bad"), "fedavg");
  std::ofstream(dir.file("bad/rounds.csv"), std::ios::app) << "3,x,1,,,0,1,1,1,1,1,1,0,ok\n";
  EXPECT_THROW(loadFederatedRun(dir.file("bad")), UsageError);
  std::filesystem::remove(dir.file("bad/rounds.csv"));
  EXPECT_THROW(loadFederatedRun(dir.file("bad")), UsageError);
}

TEST(FederatedTable, ColumnsAndCellsFromTheSummary) {
  testing::TempDir dir;
  testing::writeFederatedRun(dir.file("a"), "balanced", 2.5, "0.1");
  testing::writeFederatedRun(dir.file("b"), "fedavg", 10, "null");  // iid: nlohmann writes infinity as null
  const auto table =
      federatedTable({loadFederatedRun(dir.file("a")), loadFederatedRun(dir.file("b"))}, {"balanced", "fedavg"});
  EXPECT_EQ(table.csv(),
            "run,strategy,alpha,rounds,wall_s,s_to_70%,round_to_70%,s_to_80%,round_to_80%,s_to_85%,round_to_85%,"
            "final_accuracy_%,upload_MB,download_MB,client_idle_%\n"
            "balanced,balanced,0.1,3,7.5,7.5,2,7.5,2,,,82.00,24.0,48.0,25.0\n"
            "fedavg,fedavg,iid,3,30.0,30.0,2,30.0,2,,,82.00,24.0,48.0,25.0\n");
  const auto md = table.markdown();
  EXPECT_NE(md.find("| run | strategy | alpha |"), std::string::npos);
  EXPECT_NE(md.find("|---|---|"), std::string::npos);
  EXPECT_NE(md.find("| balanced | balanced | 0.1 | 3 | 7.5 | 7.5 | 2 | 7.5 | 2 | - | - | 82.00 |"), std::string::npos)
      << md;
}

TEST(FederatedTable, AnOlderOrPartialSummaryLeavesCellsEmpty) {
  FederatedResults run;
  run.summary = {{"kind", "federated"}, {"strategy", "fedbuff"}, {"time_to_accuracy", {{"0.80", nullptr}}}};
  const auto table = federatedTable({run}, {"x"});
  EXPECT_EQ(table.csv().substr(table.csv().find('\n') + 1), "x,fedbuff,,,,,,,,,,,,,\n");
}

TEST(FederatedCharts, AccuracyOverWallTimeFromEvaluatedRoundsOnly) {
  testing::TempDir dir;
  testing::writeFederatedRun(dir.file("a"), "balanced", 2.5);
  FederatedResults never;  // never evaluated: no line (gnuplot fails on an empty one)
  never.rounds = {{0, 1.0, std::nullopt, {}}};
  const auto chart = accuracyOverWallTime({loadFederatedRun(dir.file("a")), never}, {"A", "N"});
  ASSERT_EQ(chart.series.size(), 1u);
  EXPECT_EQ(chart.series[0].title, "A");
  ASSERT_EQ(chart.series[0].points.size(), 2u);
  EXPECT_DOUBLE_EQ(chart.series[0].points[0].first, 2.5);
  EXPECT_DOUBLE_EQ(chart.series[0].points[0].second, 61.0);
  EXPECT_DOUBLE_EQ(chart.series[0].points[1].first, 7.5);
  EXPECT_DOUBLE_EQ(chart.series[0].points[1].second, 82.0);
}

TEST(FederatedCharts, DoneStepsPerClientAndRound) {
  testing::TempDir dir;
  testing::writeFederatedRun(dir.file("a"), "balanced");
  const auto chart = clientStepsPerRound(loadFederatedRun(dir.file("a")), "t");
  ASSERT_EQ(chart.series.size(), 2u);
  EXPECT_EQ(chart.series[1].title, "client 1");
  EXPECT_TRUE(chart.series[1].steps);
  const std::vector<std::pair<double, double>> expected{{0, 6}, {1, 8}, {2, 8}};
  EXPECT_EQ(chart.series[1].points, expected);
}

TEST(HtmlReport, FederatedRunsGetTheirTableAndCharts) {
  testing::TempDir dir, out;
  testing::writeFederatedRun(dir.file("bal"), "balanced", 2.5);
  testing::writeFederatedRun(dir.file("avg"), "fedavg", 10);
  writeHtmlReport({dir.file("bal"), dir.file("avg")}, out.file("report.html"));
  const auto page = testing::readFile(out.file("report.html"));
  EXPECT_NE(page.find("<h2>Federated runs</h2>"), std::string::npos);
  EXPECT_NE(page.find("<th>s_to_80%</th>"), std::string::npos);
  EXPECT_NE(page.find("<td>bal (balanced)</td><td>balanced</td><td>0.1</td><td>3</td><td>7.5</td>"), std::string::npos);
  EXPECT_NE(page.find("<td>-</td>"), std::string::npos);     // 85% never reached
  EXPECT_EQ(page.find("<h2>Runs</h2>"), std::string::npos);  // no training run, no training tables
  EXPECT_NE(page.find("alt=\"test accuracy against wall time\""), std::string::npos);
  EXPECT_NE(page.find("alt=\"avg (fedavg): local steps done per client and round\""), std::string::npos);
  EXPECT_EQ(testing::embeddedImages(page), 3u)
      << "gnuplot (Debian's gnuplot-nox) is required";  // accuracy + 2 step charts
}

TEST(HtmlReport, APageMixesTrainingAndFederatedRuns) {
  testing::TempDir dir, out;
  testing::writeFederatedRun(dir.file("fed"), "fednova");
  std::filesystem::create_directories(dir.file("train"));
  fixture::writeText(dir.file("train/summary.json"), R"({"model": "mlp", "nodes": 2, "final_accuracy": 0.5})");
  fixture::writeText(dir.file("train/steps.csv"),
                     "step,rank,batch,compute_ms,comm_ms,wait_ms,sync_ms,update_ms,loss,lr,bytes_sent,bytes_received\n"
                     "0,0,8,1,1,0,1,10,1,0.1,4,4\n0,1,8,1,1,0,1,10,1,0.1,4,4\n");
  writeHtmlReport({dir.file("fed"), dir.file("train")}, out.file("report.html"));
  const auto page = testing::readFile(out.file("report.html"));
  EXPECT_NE(page.find("<h2>Runs</h2>"), std::string::npos);
  EXPECT_NE(page.find("<td>train (mlp)</td>"), std::string::npos);
  EXPECT_NE(page.find("<h2>Federated runs</h2>"), std::string::npos);
  EXPECT_NE(page.find("<td>fed (fednova)</td>"), std::string::npos);
  EXPECT_EQ(page.find("fed (?)"), std::string::npos);  // the federated run is not read as a training run
}

}  // namespace
}  // namespace balancenet::report
