// Unit tests for the log-log SVG chart: axes, ticks, skipped points, legend placement, escaping.
#include <doctest/doctest.h>

#include <regex>
#include <string>

#include "commsim/core/svg_plot.hpp"

using namespace commsim;

namespace {

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("svg_plot: byte axis at powers of two, decades on y, one line per series") {
  LogLogChart c;
  c.title = "sendrecv <0,1>: time";
  c.x_label = "message size";
  c.y_label = "time (us)";
  c.x_ticks = PlotXTicks::Bytes;
  const std::string svg = svg_loglog(c, {{"measured", plot_colour(0), {{8, 20}, {1 << 20, 40}, {0, 5}}, true},
                                         {"commsim", plot_colour(1), {{8, 21}, {1 << 20, 39}}, false}});
  CHECK(svg.rfind("<svg class=\"chart\"", 0) == 0);
  CHECK(svg.find("width=\"460\" height=\"280\"") != std::string::npos);
  CHECK(svg.find("sendrecv &lt;0,1&gt;: time") != std::string::npos);
  // 8 B .. 1 MiB: 18 powers of two, every second one labelled as nccl-tests prints sizes.
  for (const char* tick : {">16<", ">64<", ">256<", ">1K<", ">4K<", ">16K<", ">64K<", ">256K<", ">1M<"})
    CHECK(svg.find(tick) != std::string::npos);
  CHECK(svg.find(">8<") == std::string::npos);
  CHECK(svg.find(">32<") == std::string::npos);
  CHECK(svg.find(">2K<") == std::string::npos);
  CHECK(svg.find("KiB") == std::string::npos);
  CHECK(svg.find(">10<") != std::string::npos);
  CHECK(svg.find(">100<") != std::string::npos);
  CHECK(count(svg, "class=\"g\"") == 9 + 2);   // grid: 9 labelled x ticks, the 2 decades (10, 100) on y
  CHECK(count(svg, "class=\"g2\"") == 9 + 2);  // fainter: the 9 unlabelled powers of two, 20 and 50
  CHECK(count(svg, "stroke-width=\"1.8\"") == 2 + 2);  // a line per series and per legend entry
  CHECK(count(svg, "<circle class=\"m\"") == 2 + 1);   // measured: its 2 drawable points and its legend entry
  CHECK(count(svg, "class=\"m\"") == 3);               // commsim asked for no markers
  CHECK(svg.find(">measured<") != std::string::npos);
  CHECK(svg.find(">commsim<") != std::string::npos);
  CHECK(svg.find("<style>") == std::string::npos);
  CHECK(svg.substr(svg.size() - 6) == "</svg>");
}

TEST_CASE("svg_plot: every series has its own marker, hollow every other one, dashed past eight colours") {
  LogLogChart c;
  c.title = "ten series";
  std::vector<PlotSeries> series;
  for (int i = 0; i < 10; ++i)
    series.push_back(
        {"s" + std::to_string(i), plot_colour(static_cast<std::size_t>(i)), {{1, 1}, {100, 100}}});
  const std::string svg = svg_loglog(c, series);
  // Per series: 2 points + 1 legend marker. Shapes: circle, square, up, diamond, down, cross, then again.
  CHECK(count(svg, "<circle class=\"m\"") == 2 * 3);
  CHECK(count(svg, "class=\"m\"") == 10 * 3);
  CHECK(count(svg, "stroke-width=\"1.4\"") == 4 * 3);  // series 1, 3, 7, 9 outlined (5 is a cross)
  CHECK(count(svg, "stroke-dasharray") == 2 * 2);      // series 8 and 9: line and legend line
}

TEST_CASE("svg_plot: labelled powers of two thin out on long axes, as nccl-tests sizes") {
  CHECK(power_of_two_labels(3, 6) == std::vector<int>{3, 4, 5, 6});
  CHECK(power_of_two_labels(3, 20) == std::vector<int>{4, 6, 8, 10, 12, 14, 16, 18, 20});
  CHECK(power_of_two_labels(0, 30) == std::vector<int>{0, 5, 10, 15, 20, 25, 30});  // 1, 32, 1K, ..., 1G
  CHECK(power_of_two_labels(3, 42) == std::vector<int>{5, 10, 15, 20, 25, 30, 35, 40});
  CHECK(power_of_two_labels(0, 100) == std::vector<int>{0, 20, 40, 60, 80, 100});
  CHECK(axis_size_label(8) == "8");
  CHECK(axis_size_label(4096) == "4K");
  CHECK(axis_size_label(16.0 * (1 << 20)) == "16M");
  CHECK(axis_size_label(1024.0 * 1024 * 1024) == "1G");
  CHECK(axis_size_label(2.0 * (1ULL << 40)) == "2T");
}

TEST_CASE("svg_plot: powers of two, tick suffix, legend below, standalone") {
  const LogLogChart c{.title = "scaling",
                      .x_label = "GPUs",
                      .y_label = "time",
                      .x_ticks = PlotXTicks::PowersOfTwo,
                      .y_tick_suffix = " s",
                      .width = 600,
                      .height = 380,
                      .right_margin = 32,
                      .legend_below = true,
                      .standalone = true};
  const std::string svg = svg_loglog(
      c, {{"a", plot_colour(0), {{8, 0.01}, {64, 0.5}}, true}, {"b", plot_colour(9), {{16, 2}}, true}});
  CHECK(svg.find("height=\"412\"") != std::string::npos);  // 380 + 2 legend lines of 14 + 4
  for (const char* tick : {">8<", ">16<", ">32<", ">64<", ">0.01 s<", ">0.1 s<", ">1 s<", ">10 s<"})
    CHECK(svg.find(tick) != std::string::npos);
  CHECK(svg.find(">4<") == std::string::npos);
  CHECK(svg.find(">128<") == std::string::npos);
  CHECK(svg.find("<style>") != std::string::npos);
  CHECK(svg.find("fill=\"white\"") != std::string::npos);
  CHECK(std::string(plot_colour(9)) == plot_colour(1));
}

TEST_CASE("svg_plot: no drawable point says so") {
  LogLogChart c;
  c.title = "empty";
  const std::string svg = svg_loglog(c, {{"a", "#000", {{0, 1}, {1, -1}}, false}});
  CHECK(svg.find("no data") != std::string::npos);
}
