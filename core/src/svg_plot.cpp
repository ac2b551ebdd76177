// Log-log line charts as SVG: the one plotter behind the validation report, the sweep summary and
// `commsim plot`.
#include "commsim/core/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <sstream>

#include "commsim/core/text.hpp"

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

std::string num(double v) {
  return fmt("%.1f", v);
}

/// The marker of the `shape`-th series at (x, y): filled for even shapes, hollow (an outline) for odd ones,
/// so that a series drawn over another leaves the other visible.
std::string marker(std::size_t shape, double x, double y, const std::string& colour) {
  // Built with streams, not operator+ (GCC 12 warns -Wrestrict on string concatenation, a false positive).
  const double r = 3.2;
  std::ostringstream fill;
  if (shape % 2 == 0) {
    fill << "fill=\"" << colour << "\"";
  } else {
    fill << "fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"1.4\"";
  }
  std::ostringstream o;
  auto poly = [&](std::initializer_list<std::pair<double, double>> pts) {
    o << "<path class=\"m\" d=\"";
    bool first = true;
    for (auto [dx, dy] : pts) {
      o << (first ? "M" : "L") << num(x + dx) << "," << num(y + dy);
      first = false;
    }
    o << "Z\" " << fill.str() << "/>";
  };
  switch (shape % 6) {
    case 0:
      o << "<circle class=\"m\" cx=\"" << num(x) << "\" cy=\"" << num(y) << "\" r=\"" << num(r) << "\" "
        << fill.str() << "/>";
      break;
    case 1:
      poly({{-r, -r}, {r, -r}, {r, r}, {-r, r}});
      break;
    case 2:
      poly({{0, -1.25 * r}, {1.15 * r, 0.85 * r}, {-1.15 * r, 0.85 * r}});
      break;
    case 3:
      poly({{0, -1.35 * r}, {1.35 * r, 0}, {0, 1.35 * r}, {-1.35 * r, 0}});
      break;
    case 4:
      poly({{0, 1.25 * r}, {1.15 * r, -0.85 * r}, {-1.15 * r, -0.85 * r}});
      break;
    default:  // a cross: strokes only
      o << "<path class=\"m\" d=\"M" << num(x - r) << "," << num(y - r) << "L" << num(x + r) << ","
        << num(y + r) << "M" << num(x - r) << "," << num(y + r) << "L" << num(x + r) << "," << num(y - r)
        << "\" stroke=\"" << colour << "\" stroke-width=\"1.8\" fill=\"none\"/>";
      break;
  }
  return o.str();
}

}  // namespace

std::vector<int> power_of_two_labels(int e0, int e1, int max_labels) {
  std::vector<int> out;
  for (int step : {1, 2, 5, 10, 20}) {
    out.clear();
    for (int e = e0; e <= e1; ++e) {
      if (((e % step) + step) % step == 0) out.push_back(e);
    }
    if (static_cast<int>(out.size()) <= max_labels) break;
  }
  return out;
}

std::string axis_size_label(double bytes) {
  static const char* const kSuffix[] = {"", "K", "M", "G", "T", "P"};
  int k = 0;
  while (k < 5 && bytes >= 1024) bytes /= 1024, ++k;
  return fmt("%g", bytes) + kSuffix[k];
}

const char* svg_chart_css() {
  return "svg text{font:11px sans-serif;fill:#333}svg .ct{font-weight:bold;font-size:12px}"
         "svg .g{stroke:#d0d0d0;stroke-width:1}svg .g2{stroke:#efefef;stroke-width:1}"
         "svg .ax{stroke:#888;stroke-width:1}";
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
  // The x axis: labelled ticks with a grid line each, and a fainter line at every other power (of two or
  // ten).
  struct Tick {
    double value;
    bool labelled;
  };
  std::vector<Tick> xticks;
  double lx0 = 0, lx1 = 0;
  if (chart.x_ticks == PlotXTicks::Decades) {
    lx0 = std::floor(std::log10(x0)), lx1 = std::max(lx0 + 1, std::ceil(std::log10(x1)));
    for (double d = lx0; d <= lx1; ++d) xticks.push_back({std::pow(10, d), true});
  } else {  // whole powers of two
    const int e0 = static_cast<int>(std::floor(std::log2(x0)));
    const int e1 = std::max(e0 + 1, static_cast<int>(std::ceil(std::log2(x1))));
    lx0 = e0 * std::log10(2.0), lx1 = e1 * std::log10(2.0);
    const std::vector<int> labels = power_of_two_labels(e0, e1);
    for (int e = e0; e <= e1; ++e) {
      const bool labelled = std::find(labels.begin(), labels.end(), e) != labels.end();
      if (labelled || e1 - e0 <= 48) xticks.push_back({std::ldexp(1.0, e), labelled});
    }
  }
  const double ly0 = std::floor(std::log10(y0)), ly1 = std::max(ly0 + 1, std::ceil(std::log10(y1)));
  auto px = [&](double x) { return L + (std::log10(x) - lx0) / (lx1 - lx0) * (W - L - R); };
  auto py = [&](double y) { return H - B - (std::log10(y) - ly0) / (ly1 - ly0) * (H - T - B); };
  for (double d = ly0; d <= ly1; ++d) {
    if (d < ly1 && ly1 - ly0 <= 6) {  // fainter lines at 2x and 5x within each decade
      for (double m : {2.0, 5.0}) {
        const double y = py(m * std::pow(10, d));
        o << "<line x1=\"" << L << "\" x2=\"" << W - R << "\" y1=\"" << num(y) << "\" y2=\"" << num(y)
          << "\" class=\"g2\"/>";
      }
    }
    const double y = py(std::pow(10, d));
    o << "<line x1=\"" << L << "\" x2=\"" << W - R << "\" y1=\"" << y << "\" y2=\"" << y
      << "\" class=\"g\"/>";
    o << "<text x=\"" << L - 4 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">"
      << fmt("%g", std::pow(10, d)) << html_escape(chart.y_tick_suffix) << "</text>";
  }
  for (const Tick& t : xticks) {
    const double x = px(t.value);
    o << "<line x1=\"" << num(x) << "\" x2=\"" << num(x) << "\" y1=\"" << T << "\" y2=\"" << H - B
      << "\" class=\"" << (t.labelled ? "g" : "g2") << "\"/>";
    if (!t.labelled) continue;
    o << "<text x=\"" << num(x) << "\" y=\"" << H - B + 14 << "\" text-anchor=\"middle\">"
      << (chart.x_ticks == PlotXTicks::Bytes ? axis_size_label(t.value) : fmt("%g", t.value)) << "</text>";
  }
  o << "<path d=\"M" << L << "," << T << "V" << H - B << "H" << W - R << "\" fill=\"none\" class=\"ax\"/>";
  o << "<text x=\"" << (L + W - R) / 2 << "\" y=\"" << H - 6 << "\" text-anchor=\"middle\">"
    << html_escape(chart.x_label) << "</text>";
  o << "<text transform=\"translate(14," << (T + H - B) / 2 << ") rotate(-90)\" text-anchor=\"middle\">"
    << html_escape(chart.y_label) << "</text>";
  // Series: lines first, then every series' markers over them; series past the palette's eight colours
  // get a dashed line.
  for (std::size_t i = 0; i < series.size(); ++i) {
    const PlotSeries& s = series[i];
    std::ostringstream path;
    bool first = true;
    for (auto [x, y] : s.points) {
      if (!drawable(x, y)) continue;
      path << (first ? "M" : "L") << num(px(x)) << "," << num(py(y));
      first = false;
    }
    o << "<path d=\"" << path.str() << "\" fill=\"none\" stroke=\"" << s.colour << "\" stroke-width=\"1.8\""
      << (i >= 8 ? " stroke-dasharray=\"6,3\"" : "") << "/>";
  }
  for (std::size_t i = 0; i < series.size(); ++i) {
    const PlotSeries& s = series[i];
    if (!s.markers) continue;
    for (auto [x, y] : s.points) {
      if (drawable(x, y)) o << marker(i, px(x), py(y), s.colour);
    }
  }
  // The legend: the line and the marker of each series, then its name; on a white box when inside the plot.
  const double lx = L + 8;
  const double ly0_legend = (chart.legend_below ? H : T) + 10;
  if (!chart.legend_below && !series.empty()) {
    std::size_t longest = 0;
    for (const auto& s : series) longest = std::max(longest, s.name.size());
    o << "<rect x=\"" << lx - 4 << "\" y=\"" << ly0_legend - 10 << "\" width=\""
      << num(36 + 6.2 * static_cast<double>(longest)) << "\" height=\"" << 14 * series.size() + 4
      << "\" fill=\"white\" fill-opacity=\"0.85\" stroke=\"#ccc\"/>";
  }
  for (std::size_t i = 0; i < series.size(); ++i) {
    const PlotSeries& s = series[i];
    const double ly = ly0_legend + 14 * static_cast<double>(i);
    o << "<path d=\"M" << lx << "," << ly - 3 << "H" << lx + 20 << "\" stroke=\"" << s.colour
      << "\" stroke-width=\"1.8\"" << (i >= 8 ? " stroke-dasharray=\"6,3\"" : "") << "/>";
    if (s.markers) o << marker(i, lx + 10, ly - 3, s.colour);
    o << "<text x=\"" << lx + 26 << "\" y=\"" << ly + 1 << "\">" << html_escape(s.name) << "</text>";
  }
  o << "</svg>";
  return o.str();
}

}  // namespace commsim
