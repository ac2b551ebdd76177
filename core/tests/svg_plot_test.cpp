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

TEST_CASE("svg_plot: byte axis, decades on y, one path per series") {
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
  CHECK(svg.find(">1 B<") != std::string::npos);
  CHECK(svg.find(">1 KiB<") != std::string::npos);
  CHECK(svg.find(">1 MiB<") != std::string::npos);
  CHECK(svg.find(">10<") != std::string::npos);
  CHECK(svg.find(">100<") != std::string::npos);
  CHECK(count(svg, "<path ") == 2);
  CHECK(count(svg, "<circle ") == 2);  // the x = 0 point is skipped
  CHECK(svg.find("<style>") == std::string::npos);
  CHECK(svg.substr(svg.size() - 6) == "</svg>");
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
