// `commsim plot`: a log-log SVG chart of two columns of TSV or CSV files, one line per file (the plotter of
// sim/bench/scaling.sh).
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "commsim/core/csv.hpp"
#include "commsim/core/error.hpp"
#include "commsim/core/output_guard.hpp"
#include "commsim/core/svg_plot.hpp"
#include "commsim/core/text.hpp"

namespace commsim::cli {
namespace {

struct PlotOptions {
  std::vector<std::string> inputs;
  std::vector<std::string> labels;
  std::string out;
  std::string x;
  std::string y;
  std::string title;
  std::string x_label;
  std::string y_label;
  std::string x_ticks = "decades";
  std::string y_suffix;
  double y_floor = 0;
  double width = 600;
  double height = 380;
};

/// The (x, y) points of one file: its first non-comment line names the columns (tab-separated when it has a
/// tab, else comma-separated); every later line is a row. Throws InputError naming file, line and column.
std::vector<std::pair<double, double>> read_points(const std::string& file, const PlotOptions& o) {
  const std::string text = read_file(file);
  require_text(text, file, "a TSV or CSV table with a header line");
  std::vector<std::pair<double, double>> points;
  char delimiter = ',';
  int xi = -1, yi = -1;
  bool header = true;
  for (const Line& l : split_lines(text)) {
    if (l.text.empty() || l.text.front() == '#') continue;
    if (header) {
      header = false;
      delimiter = l.text.find('\t') != std::string_view::npos ? '\t' : ',';
      const auto names = csv_split(l.text, delimiter);
      for (std::size_t i = 0; i < names.size(); ++i) {
        if (names[i] == o.x) xi = static_cast<int>(i);
        if (names[i] == o.y) yi = static_cast<int>(i);
      }
      for (const auto& [index, name] : {std::pair{xi, o.x}, std::pair{yi, o.y}}) {
        if (index < 0)
          throw InputError({file, l.number, 1},
                           "no column '" + name + "' (columns: " + join(names, ", ") + ")");
      }
      continue;
    }
    const auto cells = csv_split(l.text, delimiter);
    auto number = [&](int index) {
      int column = 1;  // of the cell, for the message
      for (int i = 0; i < index && i < static_cast<int>(cells.size()); ++i)
        column += static_cast<int>(cells[i].size()) + 1;
      if (index >= static_cast<int>(cells.size()))
        throw InputError({file, l.number, column}, "the row has no column " + std::to_string(index + 1));
      const std::string& cell = cells[index];
      char* end = nullptr;
      errno = 0;
      const double v = std::strtod(cell.c_str(), &end);
      if (cell.empty() || end != cell.c_str() + cell.size() || errno == ERANGE)
        throw InputError({file, l.number, column}, "'" + cell + "' is not a number");
      return v;
    };
    // A row without a value in the plotted column (a weight-sync constant's band, a failed sweep point) has
    // no point; a cell that is not a number is still an error.
    if (yi < static_cast<int>(cells.size()) && cells[yi].empty()) continue;
    points.emplace_back(number(xi), std::max(number(yi), o.y_floor));
  }
  if (header) throw InputError({file, 1, 1}, "no header line");
  return points;
}

void run_plot(const PlotOptions& o) {
  OutputGuard guard;
  guard.inputs("FILE", o.inputs);
  guard.output("--out", o.out);
  guard.check();
  if (!o.labels.empty() && o.labels.size() != o.inputs.size())
    throw UsageError("--label is given " + std::to_string(o.labels.size()) + " time(s) for " +
                     std::to_string(o.inputs.size()) + " file(s): give one per file, or none");
  LogLogChart chart;
  chart.title = o.title.empty() ? o.y + " against " + o.x + " (log-log)" : o.title;
  chart.x_label = o.x_label.empty() ? o.x : o.x_label;
  chart.y_label = o.y_label.empty() ? o.y : o.y_label;
  chart.x_ticks = o.x_ticks == "bytes"           ? PlotXTicks::Bytes
                  : o.x_ticks == "powers-of-two" ? PlotXTicks::PowersOfTwo
                                                 : PlotXTicks::Decades;
  chart.y_tick_suffix = o.y_suffix;
  chart.width = o.width;
  chart.height = o.height;
  chart.right_margin = 32;  // the last x tick sits on the right edge: room for its label
  chart.standalone = true;
  std::vector<PlotSeries> series;
  for (std::size_t i = 0; i < o.inputs.size(); ++i) {
    const std::string name =
        o.labels.empty() ? std::filesystem::path(o.inputs[i]).stem().string() : o.labels[i];
    series.push_back({name, plot_colour(i), read_points(o.inputs[i], o), true});
  }
  const std::string svg = svg_loglog(chart, series) + "\n";
  if (o.out.empty()) {
    std::fputs(svg.c_str(), stdout);
  } else {
    write_file_atomic(o.out, svg);
  }
}

}  // namespace

void add_plot_command(CLI::App& app) {
  auto o = std::make_shared<PlotOptions>();
  CLI::App* p = app.add_subcommand(
      "plot", "Draw two columns of TSV or CSV files as a log-log SVG chart, one line per file");
  p->add_option("inputs", o->inputs,
                "TSV or CSV files; the first line that is not a # comment names the\ncolumns")
      ->required();
  p->add_option("--x", o->x, "Column of the x axis")->required();
  p->add_option("--y", o->y, "Column of the y axis")->required();
  p->add_option("-o,--out", o->out, "SVG file to write (default: standard output)");
  p->add_option("--label", o->labels, "Legend name per file, in order (default: the file names' stems)");
  p->add_option("--title", o->title, "Chart title (default: \"Y against X (log-log)\")");
  p->add_option("--x-label", o->x_label, "x axis label (default: the column name)");
  p->add_option("--y-label", o->y_label, "y axis label (default: the column name)");
  p->add_option("--x-ticks", o->x_ticks,
                "x grid: decades, bytes (powers of two labelled 8, 1K, 16M, 1G, ...) or powers-of-two")
      ->check(CLI::IsMember({"decades", "bytes", "powers-of-two"}))
      ->capture_default_str();
  p->add_option("--y-suffix", o->y_suffix, "Text after each y tick label, e.g. \" s\"");
  p->add_option(
       "--y-floor", o->y_floor,
       "Raise smaller y values to this one (a log axis cannot show 0, e.g. a\ntiming that rounds to 0)")
      ->capture_default_str();
  p->add_option("--width", o->width, "Width in pixels")
      ->capture_default_str()
      ->check(CLI::Range(200.0, 4000.0));
  p->add_option("--height", o->height, "Height in pixels")
      ->capture_default_str()
      ->check(CLI::Range(150.0, 4000.0));
  p->footer(R"(
EXAMPLE
  commsim plot sim/bench/scaling-all_reduce.tsv sim/bench/scaling-alltoall.tsv --x gpus --y user_s \
    --y-floor 0.01 --x-ticks powers-of-two --y-suffix ' s' --label all_reduce --label alltoall -o scaling.svg)");
  p->callback([o] { run_plot(*o); });
}

}  // namespace commsim::cli
