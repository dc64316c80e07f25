// `balancenet report`: the page opens in a real browser (headless Chromium) with its tables and charts.
#include <gtest/gtest.h>

#include <filesystem>

#include "BinaryFixture.h"

namespace balancenet::testing {
namespace {

class Report : public BinaryFixture {};

TEST_F(Report, PageLoadsInHeadlessChromiumWithTablesAndCharts) {
  auto r = train({"--nodes", "2", "--model", "mlp", "--steps", "12", "--global-batch", "16"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const auto page = dir_.file("report.html");
  auto rep = run({"report", dir_.file("run"), "-o", page});  // -o: the short form of --out
  ASSERT_EQ(rep.exitCode, 0) << rep.output;
  ASSERT_TRUE(std::filesystem::exists(page));

  if (!std::filesystem::exists("/usr/bin/chromium"))
    GTEST_SKIP() << "chromium is not installed: the page was written but not opened in a browser";
  ProcessOptions o;
  o.timeoutSeconds = 90;
  o.env["HOME"] = dir_.path();  // Chromium writes its profile under HOME
  auto dom =
      runProcess({"/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000",
                  "--user-data-dir=" + dir_.file("chromium"), "--dump-dom", "file://" + page},
                 o);
  ASSERT_EQ(dom.exitCode, 0) << dom.output;
  // The page's own check ran in the browser: every chart decoded (throughput, update time, split).
  EXPECT_NE(dom.output.find("all 3 charts loaded"), std::string::npos) << dom.output.substr(0, 2000);
  EXPECT_NE(dom.output.find("<td>run (mlp)</td>"), std::string::npos);
  EXPECT_NE(dom.output.find("Where each worker's step goes"), std::string::npos);
}

}  // namespace
}  // namespace balancenet::testing
