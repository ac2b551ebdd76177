// Log-log line charts as SVG: the one plotter behind the validation report, the sweep summary and
// `commsim plot`.
#include "commsim/core/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <sstream>

#include "commsim/core/text.hpp"
#include "commsim/core/units.hpp"

namespace commsim {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

bool drawable(double x, double y) {
  return x > 0 && y > 0 && std::isfinite(y);
}

}  // namespace

const char* svg_chart_css() {
  return "svg text{font:11px sans-serif;fill:#333}svg .ct{font-weight:bold;font-size:12px}"
         "svg .g{stroke:#e4e4e4;stroke-width:1}";
}

const char* plot_colour(std::size_t i) {
  static const char* const kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                         "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
  return kColours[i % 8];
}

std::string svg_loglog(const LogLogChart& chart, const std::vector<PlotSeries>& series) {
  // Plot area: L, R, T, B are the margins around it inside W x H; a legend below adds to the height.
  const double W = chart.width, H = chart.height, L = 64, R = chart.right_margin, T = 26, B = 40;
  const double height = H + (chart.legend_below ? 14 * static_cast<double>(series.size()) + 4 : 0);
  double x0 = 1e300, x1 = 0, y0 = 1e300, y1 = 0;
  for (const auto& s : series) {
    for (auto [x, y] : s.points) {
      if (!drawable(x, y)) continue;
      x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
    }
  }
  std::ostringstream o;
  o << "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << height
    << "\" viewBox=\"0 0 " << W << " " << height << "\" role=\"img\"><title>" << html_escape(chart.title)
    << "</title>";
  if (chart.standalone)
    o << "<style>" << svg_chart_css() << "</style><rect width=\"" << W << "\" height=\"" << height
      << "\" fill=\"white\"/>";
  o << "<text x=\"" << W / 2 << "\" y=\"16\" text-anchor=\"middle\" class=\"ct\">" << html_escape(chart.title)
    << "</text>";
  if (x1 <= 0) return o.str() + "<text x=\"20\" y=\"60\">no data</text></svg>";
  // Axis spans in log10: whole decades (whole powers of two for PowersOfTwo on x).
  std::vector<double> xticks;
  double lx0 = 0, lx1 = 0;
  if (chart.x_ticks == PlotXTicks::PowersOfTwo) {
    const double e0 = std::floor(std::log2(x0)), e1 = std::max(e0 + 1, std::ceil(std::log2(x1)));
    lx0 = e0 * std::log10(2.0), lx1 = e1 * std::log10(2.0);
    for (double e = e0; e <= e1; ++e) xticks.push_back(std::pow(2, e));
  } else {
    lx0 = std::floor(std::log10(x0)), lx1 = std::max(lx0 + 1, std::ceil(std::log10(x1)));
    if (chart.x_ticks == PlotXTicks::Bytes) {  // 1 B, 1 KiB, ...
      for (double v = 1; v <= std::pow(10, lx1); v *= 1024)
        if (v >= std::pow(10, lx0)) xticks.push_back(v);
    } else {
      for (double d = lx0; d <= lx1; ++d) xticks.push_back(std::pow(10, d));
    }
  }
  const double ly0 = std::floor(std::log10(y0)), ly1 = std::max(ly0 + 1, std::ceil(std::log10(y1)));
  auto px = [&](double x) { return L + (std::log10(x) - lx0) / (lx1 - lx0) * (W - L - R); };
  auto py = [&](double y) { return H - B - (std::log10(y) - ly0) / (ly1 - ly0) * (H - T - B); };
  for (double d = ly0; d <= ly1; ++d) {
    const double y = py(std::pow(10, d));
    o << "<line x1=\"" << L << "\" x2=\"" << W - R << "\" y1=\"" << y << "\" y2=\"" << y
      << "\" class=\"g\"/>";
    o << "<text x=\"" << L - 4 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">"
      << fmt("%g", std::pow(10, d)) << html_escape(chart.y_tick_suffix) << "</text>";
  }
  for (double v : xticks) {
    const double x = px(v);
    o << "<line x1=\"" << x << "\" x2=\"" << x << "\" y1=\"" << T << "\" y2=\"" << H - B
      << "\" class=\"g\"/>";
    o << "<text x=\"" << x << "\" y=\"" << H - B + 14 << "\" text-anchor=\"middle\">"
      << (chart.x_ticks == PlotXTicks::Bytes ? format_size(static_cast<std::uint64_t>(v)) : fmt("%g", v))
      << "</text>";
  }
  o << "<text x=\"" << (L + W - R) / 2 << "\" y=\"" << H - 6 << "\" text-anchor=\"middle\">"
    << html_escape(chart.x_label) << "</text>";
  o << "<text transform=\"translate(14," << (T + H - B) / 2 << ") rotate(-90)\" text-anchor=\"middle\">"
    << html_escape(chart.y_label) << "</text>";
  int legend = 0;
  for (const auto& s : series) {
    std::ostringstream path;
    bool first = true;
    for (auto [x, y] : s.points) {
      if (!drawable(x, y)) continue;
      path << (first ? "M" : "L") << fmt("%.1f", px(x)) << "," << fmt("%.1f", py(y));
      first = false;
    }
    o << "<path d=\"" << path.str() << "\" fill=\"none\" stroke=\"" << s.colour
      << "\" stroke-width=\"1.8\"/>";
    if (s.markers) {
      for (auto [x, y] : s.points) {
        if (!drawable(x, y)) continue;
        o << "<circle cx=\"" << fmt("%.1f", px(x)) << "\" cy=\"" << fmt("%.1f", py(y))
          << "\" r=\"2.5\" fill=\"" << s.colour << "\"/>";
      }
    }
    const double ly = (chart.legend_below ? H : T) + 10 + 14 * legend++;
    o << "<rect x=\"" << L + 8 << "\" y=\"" << ly - 8 << "\" width=\"10\" height=\"10\" fill=\"" << s.colour
      << "\"/><text x=\"" << L + 22 << "\" y=\"" << ly + 1 << "\">" << html_escape(s.name) << "</text>";
  }
  o << "</svg>";
  return o.str();
}

}  // namespace commsim
