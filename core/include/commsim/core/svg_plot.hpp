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
  bool markers = false;  ///< a dot at every point
};

/// Where the x axis has its grid lines and labels.
enum class PlotXTicks {
  Decades,      ///< 1, 10, 100, ...: "%g"
  Bytes,        ///< 1 B, 1 KiB, 1 MiB, ...: x is a size in bytes
  PowersOfTwo,  ///< 8, 16, 32, ...: "%g"; the axis spans whole powers of two instead of decades
};

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
