// The report page: plain HTML and CSS, charts as base64 PNGs, and one tiny script that checks they load.
#include "balancenet/report/HtmlReport.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "balancenet/core/AtomicFile.h"
#include "balancenet/report/FederatedCharts.h"
#include "balancenet/report/GnuplotChart.h"
#include "balancenet/report/PipelineChart.h"
#include "balancenet/report/RunCharts.h"

namespace balancenet::report {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string base64(const std::string& bytes) {
  static const char* table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    for (int shift : {18, 12, 6, 0}) out += table[(v >> shift) & 63];
  }
  if (i < bytes.size()) {
    uint32_t v = uint8_t(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= uint8_t(bytes[i + 1]) << 8;
    out += table[(v >> 18) & 63];
    out += table[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? table[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string fileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A PNG file as an <img> with its bytes inline.
std::string inlineImage(const std::string& pngPath, const std::string& alt) {
  const std::string png = fileBytes(pngPath);
  return fmt::format("<figure><img class=\"chart\" alt=\"{}\" src=\"data:image/png;base64,{}\"></figure>\n",
                     escape(alt), base64(png));
}

// The chart as an <img> with its PNG inline; empty when gnuplot could not draw it.
std::string chartImage(const Chart& chart, const std::string& pngPath) {
  return renderChart(chart, pngPath) ? inlineImage(pngPath, chart.title) : std::string();
}

std::string label(const RunResults& run) {
  return fmt::format("{} ({})", runName(run.dir), run.summary.value("model", "?"));
}

// Token runs (gpt) are measured in tokens/s, and their test set by perplexity (bits per byte for text);
// regression runs by mse; class runs in samples/s and accuracy.
std::string throughputCell(const nlohmann::json& s) {
  if (s.contains("tokens_per_second")) return fmt::format("{:.0f} tokens/s", s["tokens_per_second"].get<double>());
  return fmt::format("{:.1f}", s.value("samples_per_second", 0.0));
}

std::string finalMetricCell(const nlohmann::json& s) {
  if (s.contains("final_bits_per_byte"))
    return fmt::format("perplexity {:.3f}, {:.3f} bits/byte", s["final_perplexity"].get<double>(),
                       s["final_bits_per_byte"].get<double>());
  if (s.contains("final_perplexity")) return fmt::format("perplexity {:.3f}", s["final_perplexity"].get<double>());
  if (s.contains("final_mse")) return fmt::format("mse {:.4g}", s["final_mse"].get<double>());
  if (s.contains("final_accuracy") && s["final_accuracy"].is_number())
    return fmt::format("{:.2f}%", 100 * s["final_accuracy"].get<double>());
  return "-";
}

std::string summaryTable(const std::vector<RunResults>& runs) {
  std::string out =
      "<table><tr><th>run</th><th>workers</th><th>steps</th><th>samples/s</th><th>mean weight update (ms)</th>"
      "<th>exposed sync (ms)</th><th>MB sent per worker-step</th><th>final test accuracy</th>"
      "<th>final split</th><th>peak memory, largest worker (MB)</th></tr>\n";
  for (const auto& r : runs) {
    const auto& s = r.summary;
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}</td><td>{:.1f}</td><td>{:.2f}</td>"
        "<td>{}</td><td>{}</td><td>{}</td></tr>\n",
        escape(label(r)), s.value("nodes", 0), s.value("steps", 0), throughputCell(s),
        s.value("mean_weight_update_ms", 0.0), r.meanSyncMs(), r.bytesSentPerStep / 1e6, finalMetricCell(s),
        escape(s.value("split", "")),
        r.peakMemoryMb.empty()
            ? "-"
            : fmt::format("{:.0f}", *std::max_element(r.peakMemoryMb.begin(), r.peakMemoryMb.end())));
  }
  return out + "</table>\n";
}

std::string per100Table(const std::vector<RunResults>& runs) {
  size_t blocks = 0;
  for (const auto& r : runs)
    blocks = std::max(blocks, r.summary.value("weight_update_ms_per_100", std::vector<double>{}).size());
  if (blocks == 0) return {};
  std::string out = "<table><tr><th>run</th>";
  for (size_t b = 0; b < blocks; ++b) out += fmt::format("<th>{}-{}</th>", b * 100 + 1, (b + 1) * 100);
  out += "</tr>\n";
  for (const auto& r : runs) {
    out += "<tr><td>" + escape(label(r)) + "</td>";
    for (double v : r.summary.value("weight_update_ms_per_100", std::vector<double>{}))
      out += fmt::format("<td>{:.1f}</td>", v);
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

// A rank's training GFLOP/s and its fraction of the machine's one-thread sgemm peak x threads
// (summary.json's "workers"); "-" for runs written before it existed.
std::string efficiencyCells(const RunResults& run, int rank) {
  if (run.summary.contains("workers"))
    for (const auto& w : run.summary["workers"])
      if (w.value("rank", -1) == rank)
        return fmt::format("<td>{:.1f}</td><td>{:.2f}</td>", w.value("achieved_gflops", 0.0),
                           w.value("fraction_of_peak", 0.0));
  return "<td>-</td><td>-</td>";
}

// Numbers and a stacked bar per rank: where each node's step time goes, and how near its peak it ran.
std::string breakdownTable(const RunResults& run) {
  double longest = 1e-9;
  for (const auto& k : run.ranks) longest = std::max(longest, k.computeMs + k.commMs + k.waitMs);
  std::string out = fmt::format(
      "<h3>{}</h3>\n<table class=\"breakdown\"><tr><th>rank</th><th>compute (ms)</th>"
      "<th>communication (ms)</th><th>waiting (ms)</th><th>GFLOP/s</th>"
      "<th>of sgemm peak</th><th></th></tr>\n",
      escape(label(run)));
  for (const auto& k : run.ranks) {
    auto bar = [&](double ms, const char* cls) {
      return fmt::format("<span class=\"{}\" style=\"width:{:.1f}%\"></span>", cls, 100 * ms / longest);
    };
    out += fmt::format(
        "<tr><td>{}</td><td>{:.1f}</td><td>{:.1f}</td><td>{:.1f}</td>{}<td class=\"bar\">{}{}{}</td></tr>\n", k.rank,
        k.computeMs, k.commMs, k.waitMs, efficiencyCells(run, k.rank), bar(k.computeMs, "compute"),
        bar(k.commMs, "comm"), bar(k.waitMs, "wait"));
  }
  return out + "</table>\n";
}

// The schedule a pipelined run used, as its summary.json names it; empty when it does not.
std::string scheduleOf(const nlohmann::json& summary) {
  if (summary.contains("schedule") && summary["schedule"].is_string()) return summary["schedule"];
  if (summary.contains("pipeline") && summary["pipeline"].is_object()) return summary["pipeline"].value("schedule", "");
  return {};
}

// One line on a step's bubble: each rank's idle share, their mean, and (S-1)/(M+S-1), what a flushed
// pipeline of equal stages would leave idle.
std::string bubbleLine(const StepIdle& idle) {
  std::string perRank;
  for (const auto& r : idle.ranks)
    perRank += fmt::format("{}rank {} {:.1f}% ({:.1f} ms busy)", perRank.empty() ? "" : ", ", r.rank,
                           100 * r.bubbleFraction, r.busyMs);
  const double analytical = idle.stages > 0 ? (idle.stages - 1.0) / (idle.microBatches + idle.stages - 1.0) : 0;
  return fmt::format(
      "<p>Step {} ({:.1f} ms from the first action to the last): bubble fraction {}; mean {:.1f}% "
      "(equal stages would leave (S-1)/(M+S-1) = {:.1f}% with S = {}, M = {}).</p>\n",
      idle.step, idle.spanMs, perRank, 100 * idle.meanBubbleFraction, 100 * analytical, idle.stages, idle.microBatches);
}

// Each pipelined run's last recorded step: its bubble in words, and its picture as chartDir/pipeline_<i>.png.
std::string pipelineSection(const std::vector<RunResults>& runs, const std::string& chartDir) {
  std::string out;
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    if (r.pipeline.empty()) continue;
    const auto png = fmt::format("{}/pipeline_{}.png", chartDir, i);
    out += "<h3>" + escape(label(r)) + "</h3>\n" + bubbleLine(pipelineIdle(actionsOfStep(r.pipeline)));
    if (renderPipelineChart(r.pipeline, png, {-1, scheduleOf(r.summary)}))
      out += inlineImage(png, label(r) + ": pipeline schedule");
  }
  return out.empty() ? out : "<h2>Pipeline schedule</h2>\n" + out;
}

// The federated table, the accuracy-over-time chart of all federated runs, and each run's steps per client.
std::string federatedSection(const std::vector<FederatedResults>& runs, const std::string& chartDir) {
  if (runs.empty()) return {};
  std::vector<std::string> labels;
  for (const auto& r : runs) labels.push_back(r.label());
  const auto table = federatedTable(runs, labels);
  std::string out = "<h2>Federated runs</h2>\n<table><tr>";
  for (const auto& c : table.columns) out += "<th>" + escape(c) + "</th>";
  out += "</tr>\n";
  for (const auto& row : table.rows) {
    out += "<tr>";
    for (const auto& cell : row) out += "<td>" + (cell.empty() ? std::string("-") : escape(cell)) + "</td>";
    out += "</tr>\n";
  }
  out += "</table>\n";
  const auto accuracy = accuracyOverWallTime(runs, labels);
  if (!accuracy.series.empty()) out += chartImage(accuracy, chartDir + "/federated_accuracy.png");
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto steps = clientStepsPerRound(runs[i], labels[i] + ": local steps done per client and round");
    if (!steps.series.empty()) out += chartImage(steps, fmt::format("{}/federated_steps_{}.png", chartDir, i));
  }
  return out;
}

constexpr const char* kStyle = R"(<style>
body { font-family: sans-serif; margin: 2em; max-width: 1100px; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: right; }
th { background: #f3f3f3; } td:first-child { text-align: left; }
td.bar { width: 320px; text-align: left; } td.bar span { display: inline-block; height: 12px; }
.compute { background: #55a868; } .comm { background: #dd8452; } .wait { background: #c44e52; }
img.chart { max-width: 100%; }
</style>
)";

// Marks the page once every chart has decoded, so a headless browser (the tests) can tell.
constexpr const char* kImageCheck = R"(<script>
window.addEventListener('load', () => {
  const images = Array.from(document.images);
  const ok = images.every(i => i.complete && i.naturalWidth > 0);
  document.getElementById('status').textContent = ok ? `all ${images.length} charts loaded` : 'a chart failed to load';
});
</script>
)";

// The training runs' tables and charts.
std::string trainingSections(const std::vector<RunResults>& runs, const std::string& chartDir) {
  Chart throughput{"samples per second (mean of each 10 steps)", "step", "samples/s", {}};
  Chart update{"weight-update time (mean of each 10 steps, slowest worker)", "step", "ms", {}};
  for (const auto& r : runs) {
    std::vector<double> rate;
    for (size_t i = 0; i < r.updateMsPerStep.size() && i < r.samplesPerStep.size(); ++i)
      rate.push_back(r.updateMsPerStep[i] > 0 ? 1000 * r.samplesPerStep[i] / r.updateMsPerStep[i] : 0);
    throughput.series.push_back({label(r), movingBlocks(rate, 10)});
    update.series.push_back({label(r), movingBlocks(r.updateMsPerStep, 10)});
  }
  std::string charts =
      chartImage(throughput, chartDir + "/throughput.png") + chartImage(update, chartDir + "/update.png");
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    const auto split = splitChart(r, fmt::format("{}: samples per worker over training", label(r)));
    if (!split.series.empty()) charts += chartImage(split, fmt::format("{}/split_{}.png", chartDir, i));
    const auto batch = batchChart(r, fmt::format("{}: global batch and gradient noise scale", label(r)));
    if (!batch.series.empty()) charts += chartImage(batch, fmt::format("{}/batch_{}.png", chartDir, i));
  }
  std::string page = "<h2>Runs</h2>\n" + summaryTable(runs);
  const auto per100 = per100Table(runs);
  if (!per100.empty()) page += "<h2>Mean weight-update time (ms) per 100 updates</h2>\n" + per100;
  page += "<h2>Charts</h2>\n" + (charts.empty() ? "<p>(gnuplot not available: no charts)</p>\n" : charts);
  page += pipelineSection(runs, chartDir);
  page +=
      "<h2>Where each worker's step goes</h2>\n<p>Means per step after the first; waiting is time spent in "
      "the synchronisation beyond the fastest worker's (waiting for slower peers).</p>\n";
  for (const auto& r : runs) page += breakdownTable(r);
  return page;
}

}  // namespace

std::string htmlReport(const std::vector<RunResults>& runs, const std::string& chartDir,
                       const std::vector<FederatedResults>& federated) {
  std::string page = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>balancenet report</title>\n";
  page += kStyle;
  page += "</head><body>\n<h1>balancenet report</h1>\n<p id=\"status\"></p>\n";
  if (!runs.empty()) page += trainingSections(runs, chartDir);
  page += federatedSection(federated, chartDir);
  page += kImageCheck;
  return page + "</body></html>\n";
}

void writeHtmlReport(const std::vector<std::string>& runDirs, const std::string& outPath) {
  std::vector<RunResults> runs;
  std::vector<FederatedResults> federated;
  for (const auto& dir : runDirs) {
    if (isFederatedSummary(readSummaryJson(dir)))
      federated.push_back(loadFederatedRun(dir));
    else
      runs.push_back(loadRun(dir));
  }
  const auto chartDir = std::filesystem::temp_directory_path() / fmt::format("balancenet-report-{}", ::getpid());
  std::filesystem::create_directories(chartDir);
  const auto page = htmlReport(runs, chartDir.string(), federated);
  // A pipelined run's picture also stays in its directory, beside pipeline.csv (for documents, slides).
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto png = chartDir / fmt::format("pipeline_{}.png", i);
    if (!std::filesystem::exists(png)) continue;
    try {
      writeFileAtomically(runs[i].dir + "/pipeline.png", fileBytes(png.string()));
    } catch (const std::exception& e) {  // a read-only run directory: the page has the picture all the same
      spdlog::warn("could not keep the pipeline picture in {}: {}", runs[i].dir, e.what());
    }
  }
  std::filesystem::remove_all(chartDir);
  writeFileAtomically(outPath, page);
}

}  // namespace balancenet::report
