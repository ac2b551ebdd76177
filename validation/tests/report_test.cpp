// HTML and Markdown validation reports: escaping, self-containment, plots and tables.
#include <doctest/doctest.h>

#include <regex>
#include <string>
#include <vector>

#include "commsim/core/error.hpp"
#include "commsim/validation/crossval.hpp"
#include "commsim/validation/report.hpp"

using namespace commsim;
using namespace commsim::validation;

namespace {

Comparison row(std::string workload, std::vector<int> gpus, std::uint64_t bytes, double measured,
               double predicted) {
  Comparison c;
  c.workload = std::move(workload);
  c.gpus = std::move(gpus);
  c.bytes = bytes;
  c.measured_us = measured;
  c.predicted_us = predicted;
  c.runs = 5;
  c.source = "log.txt:1";
  return c;
}

std::vector<Comparison> sample() {
  std::vector<Comparison> rows;
  for (std::uint64_t b = 1; b <= (1ull << 30); b *= 32) {
    const auto x = static_cast<double>(b);
    rows.push_back(row("sendrecv", {0, 1}, b, 10 + x / 400e3, 10.5 + x / 410e3));
    rows.push_back(row("p2p", {1, 0}, b, 8 + x / 300e3, 7.9 + x / 300e3));
  }
  rows.push_back(row("p2p", {2, 3}, 1 << 20, 10, 13));  // +30%: the worst case
  return rows;
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("report: html has a plot pair per configuration, a heatmap cell per row and worst cases") {
  ReportContext ctx;
  ctx.topology = "h200x4.topo";
  ctx.model = "nccl";
  ctx.params = "h200.toml";
  const auto rows = sample();
  const std::string html = render_html(rows, ctx);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(count(html, "<svg class=\"chart\"") == 2 * 3);  // time and bandwidth for 3 configurations
  CHECK(count(html, "<rect class=\"cell\"") == rows.size());
  CHECK(html.find("p2p 2-&gt;3") != std::string::npos);
  CHECK(html.find("+30.0%") != std::string::npos);  // the worst case is listed with its signed error
  // Self-contained: no scripts, stylesheets or images fetched from anywhere.
  CHECK(html.find("<script") == std::string::npos);
  CHECK(!std::regex_search(html, std::regex(R"((src|href)\s*=)")));
  CHECK(!std::regex_search(html, std::regex(R"(url\s*\()")));
}

TEST_CASE("report: strings from input files are escaped in html") {
  ReportContext ctx;
  ctx.topology = "<img src=x onerror=alert(1)>";
  ctx.metadata.emplace_back("host", "<b>evil</b>");
  auto rows = sample();
  rows[0].source = "a<script>.log:1";
  rows[0].measured_us = 1e6;  // make it the worst case so its source is printed
  const std::string html = render_html(rows, ctx);
  CHECK(html.find("<img") == std::string::npos);
  CHECK(html.find("<b>evil") == std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("&lt;img src=x") != std::string::npos);
}

TEST_CASE("report: a pipeline timeline pair is drawn side by side on one time axis, its label escaped") {
  ReportContext ctx;
  TimelinePair t;
  t.label = "pipeline <b>x</b>";
  t.measured = {{{"forward", 0, 500}, {"backward", 600, 1600}}, {{"forward", 550, 1050}}};
  t.simulated = {{{"forward", 0, 500}, {"backward", 620, 1620}}, {{"forward", 560, 1060}}};
  t.measured_step_us = 1700;
  t.simulated_step_us = 1734;
  ctx.timeline = t;
  const std::string html = render_html(sample(), ctx);
  CHECK(count(html, "class=\"timeline\"") == 2);
  CHECK(count(html, "#2f6fd6") == 4);  // forward kernels, both sides
  CHECK(count(html, "#2a9d4b") == 2);  // backward kernels
  CHECK(html.find("+2.0%") != std::string::npos);
  CHECK(html.find("<b>x") == std::string::npos);
  CHECK(render_html(sample(), ReportContext{}).find("class=\"timeline\"") == std::string::npos);
}

TEST_CASE("report: markdown summary has a row per workload, overall and per configuration") {
  ReportContext ctx;
  ctx.command = "commsim validate --topology t";
  const auto rows = sample();
  const std::string md = render_markdown(rows, ctx);
  CHECK(md.find("| p2p | 8 |") != std::string::npos);
  CHECK(md.find("| sendrecv | 7 |") != std::string::npos);
  CHECK(md.find("| **overall** | 15 |") != std::string::npos);
  CHECK(md.find("| p2p 2->3 | 1 | 30.0% | 30.0% | 1 MiB |") != std::string::npos);
  CHECK(md.find("commsim validate --topology t") != std::string::npos);
}

TEST_CASE("report: markdown lets no HTML, table break or fence escape out of input strings") {
  const std::string payload =
      "x<script>alert(1)</script><img src=x onerror=alert(2)>|`$(touch PWNED)`[l](j:x)";
  ReportContext ctx;
  ctx.title = "t" + payload;
  ctx.topology = payload;
  ctx.model = payload;
  ctx.params = payload;
  ctx.fit_note = "fitted\n\n" + payload;
  ctx.command = "commsim validate --topology 'a\n```\nb'";  // (a code block shows HTML as text)
  auto rows = sample();
  rows[0].workload = payload;
  rows[0].mode = payload;
  rows[0].measured_us = 1e6;  // the worst case, so its label is in that table too
  const std::string md = render_markdown(rows, ctx);
  CHECK(md.find("<script") == std::string::npos);
  CHECK(md.find("<img") == std::string::npos);
  CHECK(md.find("&lt;script>") != std::string::npos);
  CHECK(md.find("\n<") == std::string::npos);  // no line starts an HTML block
  // The command's fence is longer than the ``` inside it, so the block holds all of it.
  CHECK(md.find("````\ncommsim validate") != std::string::npos);
  // Every table row keeps its cell count: a '|' from the input is escaped.
  for (std::size_t at = md.find("\n| "); at != std::string::npos; at = md.find("\n| ", at + 1)) {
    const std::string line = md.substr(at + 1, md.find('\n', at + 1) - at - 1);
    int cells = 0;
    for (std::size_t i = 0; i < line.size(); ++i) cells += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
    CHECK_MESSAGE((cells == 9 || cells == 6), line);
  }
}

TEST_CASE("report: cross-validation markdown escapes family values, refusals and the command") {
  const std::string payload = "<script>alert(1)</script>|`x`";
  CrossValidation cv;
  Fold refused;
  refused.family = Family::Knob;
  refused.value = payload;
  refused.refused = payload;
  Fold fitted;
  fitted.family = Family::Knob;
  fitted.value = payload;
  fitted.held_out = {row(payload, {0, 1}, 1024, 10, 11)};
  cv.folds = {refused, fitted};
  cv.skipped = {payload};
  cv.parameters = {payload};
  const std::string md = cross_validation_markdown(cv, "commsim validate --manifest '```\nb'");
  CHECK(md.find("<script") == std::string::npos);
  CHECK(md.find("&lt;script>") != std::string::npos);
  CHECK(md.find("````sh\n") != std::string::npos);
}

TEST_CASE("report: measured_metadata reads a commsim-measure run, a missing directory is an error") {
  const auto meta = measured_metadata(
      load_measured(std::string(COMMSIM_SOURCE_DIR) + "/validation/data/h200x4/measure/sendrecv_g2"));
  bool gpus = false, telemetry = false;
  for (const auto& [k, v] : meta) {
    if (k == "sendrecv_g2: gpus") gpus = v.find("H200") != std::string::npos;
    if (k.find("telemetry") != std::string::npos) telemetry = v.find("SM clock") != std::string::npos;
  }
  CHECK(gpus);
  CHECK(telemetry);
  CHECK_THROWS_AS(load_measured("/nonexistent/dir"), Error);
}
