// Log-log line charts as SVG: the one plotter behind the validation report, the sweep summary and
// `commsim plot`.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace commsim {

/// One line of a chart.
struct PlotSeries {
  std::string name;    ///< legend text
  std::string colour;  ///< CSS colour, e.g. "#1f77b4" (plot_colour(i) for the i-th of several)
  /// (x, y) in the axes' units, drawn in this order; points with x <= 0, y <= 0 or a non-finite y are
  /// skipped.
  std::vector<std::pair<double, double>> points;
  /// A marker at every point, its shape the series' own (circle, square, triangle, diamond, ...: the i-th
  /// series of a chart gets the i-th shape), so that series drawn over each other stay visible. The legend
  /// shows the line and the marker.
  bool markers = true;
};

/// Where the x axis has its grid lines and labels.
enum class PlotXTicks {
  Decades,      ///< 1, 10, 100, ...: "%g"
  Bytes,        ///< powers of two, labelled as nccl-tests sizes (8, 64, 512, 4K, ..., 1M, 1G): x is in bytes
  PowersOfTwo,  ///< powers of two: 8, 16, 32, ...: "%g"
};

/// The labelled ticks of a power-of-two axis from 2^e0 to 2^e1: every power of two when they are at most
/// `max_labels`, else the multiples of 2, 5, 10 or 20 (the first step that gives at most `max_labels`; the
/// multiples of 10 are 1K, 1M, 1G, so they stay labelled). Exponents, ascending.
std::vector<int> power_of_two_labels(int e0, int e1, int max_labels = 9);

/// A size as nccl-tests prints it on an axis: 8, 512, 4K, 16M, 1G, 2T (powers of 1024, no "B").
std::string axis_size_label(double bytes);

struct LogLogChart {
  std::string title;
  std::string x_label = "x";
  std::string y_label;
  PlotXTicks x_ticks = PlotXTicks::Decades;
  std::string y_tick_suffix;  ///< after each y tick label, e.g. " s"
  double width = 460;         ///< pixels
  double height = 280;        ///< pixels, without a legend below
  double right_margin = 12;   ///< pixels right of the plot area (room for a tick label on its right edge)
  bool legend_below = false;  ///< one legend line per series under the chart (height grows by 14 px each)
                              ///< rather than inside its top-left corner
  /// A file of its own: carries its styles (svg_chart_css()) and a white background. Otherwise the page it
  /// is inlined in must carry svg_chart_css().
  bool standalone = false;
};

/// The chart: both axes logarithmic, y spanning whole decades with a grid line at each, a legend.
/// Text is HTML-escaped. With no drawable point it says "no data".
std::string svg_loglog(const LogLogChart& chart, const std::vector<PlotSeries>& series);

/// The CSS the charts' classes need (text, title, grid lines), for the page that inlines them.
const char* svg_chart_css();

/// The i-th colour of the palette charts use for several series (eight, then again).
const char* plot_colour(std::size_t i);

}  // namespace commsim
