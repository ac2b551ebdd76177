// Validation reports: a self-contained HTML page (inline SVG plots) and a Markdown summary of joined rows.
#include "commsim/validation/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "commsim/core/svg_plot.hpp"
#include "commsim/core/text.hpp"

namespace commsim::validation {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

/// Human size label for an axis or table: 1 B, 4 KiB, 1 GiB.
std::string size_label(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return fmt(bytes == std::floor(bytes) ? "%.0f" : "%.1f", bytes) + " " + units[u];
}

std::vector<Comparison> worst_cases(const std::vector<Comparison>& rows, std::size_t n) {
  std::vector<Comparison> w = rows;
  std::stable_sort(w.begin(), w.end(),
                   [](const auto& a, const auto& b) { return std::fabs(a.error()) > std::fabs(b.error()); });
  if (w.size() > n) w.resize(n);
  return w;
}

constexpr Regime kRegimes[] = {Regime::Latency, Regime::Transition, Regime::Bandwidth};

// ---- SVG ----------------------------------------------------------------------------------------------

/// Colour for a signed relative error: blue under-predicts, red over-predicts, white is exact; saturates at
/// +-25%.
std::string error_color(double e) {
  const double t = std::min(1.0, std::fabs(e) / 0.25);
  const int fade = static_cast<int>(std::lround(255 * (1 - t)));
  char buf[16];
  if (e >= 0) {
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", 255, fade, fade);
  } else {
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", fade, fade, 255);
  }
  return buf;
}

std::string svg_heatmap(const std::map<std::string, std::vector<Comparison>>& groups) {
  std::set<std::uint64_t> size_set;
  for (const auto& [label, cs] : groups)
    for (const auto& c : cs) size_set.insert(c.bytes);
  const std::vector<std::uint64_t> sizes(size_set.begin(), size_set.end());
  constexpr double cell_w = 22, cell_h = 16, label_w = 300, top = 70;
  const double W = label_w + cell_w * static_cast<double>(sizes.size()) + 10;
  const double H = top + cell_h * static_cast<double>(groups.size()) + 10;
  std::ostringstream o;
  o << "<svg class=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
    << "\" role=\"img\"><title>signed error by configuration and size</title>";
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const double x = label_w + cell_w * (static_cast<double>(i) + 0.5);
    o << "<text transform=\"translate(" << x << "," << top - 4 << ") rotate(-60)\">"
      << size_label(static_cast<double>(sizes[i])) << "</text>";
  }
  int row = 0;
  for (const auto& [label, cs] : groups) {
    const double y = top + cell_h * row++;
    o << "<text x=\"" << label_w - 6 << "\" y=\"" << y + 12 << "\" text-anchor=\"end\">" << html_escape(label)
      << "</text>";
    for (const auto& c : cs) {
      const auto i =
          static_cast<double>(std::lower_bound(sizes.begin(), sizes.end(), c.bytes) - sizes.begin());
      o << "<rect class=\"cell\" x=\"" << label_w + cell_w * i << "\" y=\"" << y << "\" width=\""
        << cell_w - 1 << "\" height=\"" << cell_h - 1 << "\" fill=\"" << error_color(c.error())
        << "\"><title>" << html_escape(label) << ", " << size_label(static_cast<double>(c.bytes))
        << ": measured " << fmt("%.2f", c.measured_us) << " us, predicted " << fmt("%.2f", c.predicted_us)
        << " us, error " << fmt("%+.1f", 100 * c.error()) << "%</title></rect>";
    }
  }
  o << "</svg>";
  return o.str();
}

/// Markdown table cells: inline text that can neither end the cell ('|') nor hold HTML (markdown_escape).
std::string md_cell(const std::string& s) {
  return markdown_escape(s);
}

std::string pct(double v) {
  return fmt("%.1f", v) + "%";
}

}  // namespace

std::vector<std::pair<std::string, std::string>> measured_metadata(const MeasuredRun& run) {
  const nlohmann::json& doc = run.doc;
  std::string name = run.dir;
  while (!name.empty() && name.back() == '/') name.pop_back();
  name = name.substr(name.find_last_of('/') + 1);
  std::vector<std::pair<std::string, std::string>> out;
  auto put = [&](const std::string& key, const nlohmann::json& v) {
    out.emplace_back(name + ": " + key, v.is_string() ? v.get<std::string>() : v.dump());
  };
  for (const char* key : {"command_line", "host", "date", "driver_version", "nccl_version", "cuda_runtime",
                          "launch", "seed", "reps", "warmup", "iterations"}) {
    if (doc.contains(key)) put(key, doc[key]);
  }
  if (doc.contains("gpus") && doc["gpus"].is_array()) {
    std::string gpus;
    for (const auto& g : doc["gpus"]) {
      gpus += (gpus.empty() ? "" : "; ") + std::to_string(g.value("index", -1)) + " " + g.value("name", "?") +
              " " + g.value("pci_bus_id", "");
    }
    out.emplace_back(name + ": gpus", gpus);
  }
  if (doc.contains("nccl_env") && doc["nccl_env"].is_object()) {
    std::string env;
    for (const auto& [k, v] : doc["nccl_env"].items())
      env += (env.empty() ? "" : " ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
    out.emplace_back(name + ": nccl_env", env);
  }
  if (doc.contains("nvml_summary") && doc["nvml_summary"].is_array()) {
    for (const auto& g : doc["nvml_summary"]) {
      auto range = [&](const char* k) {
        if (!g.contains(k)) return std::string("?");
        return fmt("%.0f", g[k].value("min", 0.0)) + ".." + fmt("%.0f", g[k].value("max", 0.0));
      };
      out.emplace_back(name + ": gpu " + std::to_string(g.value("gpu", -1)) + " telemetry",
                       "temperature " + range("temperature_c") + " C, SM clock " + range("sm_clock_mhz") +
                           " MHz, power " + range("power_w") + " W, throttle reasons seen " +
                           std::to_string(g.value("throttle_reasons_seen", 0)));
    }
  }
  return out;
}

/// A Gantt chart of one pipeline step: a row per stage, forward kernels blue, backward green, on a shared
/// time axis of `span_us` so that the measured and simulated charts compare at a glance.
std::string svg_timeline(const std::string& title, const std::vector<std::vector<TimelineSpan>>& stages,
                         double span_us, double step_us) {
  const int w = 560, left = 60, right = 10, row_h = 26, top = 28;
  const int h = top + static_cast<int>(stages.size()) * row_h + 30;
  const double scale = span_us > 0 ? (w - left - right) / span_us : 1;
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h
    << "\" role=\"img\" class=\"timeline\"><title>" << html_escape(title) << "</title>";
  o << "<text x=\"" << left << "\" y=\"16\" font-size=\"13\">" << html_escape(title) << " (step "
    << fmt("%.0f", step_us) << " us)</text>";
  for (std::size_t r = 0; r < stages.size(); ++r) {
    const int y = top + static_cast<int>(r) * row_h;
    o << "<text x=\"4\" y=\"" << y + 17 << "\" font-size=\"11\">stage " << r << "</text>";
    for (const TimelineSpan& s : stages[r]) {
      const double x = left + s.start_us * scale;
      const double width = std::max(0.5, (s.end_us - s.start_us) * scale);
      o << "<rect x=\"" << fmt("%.1f", x) << "\" y=\"" << y + 4 << "\" width=\"" << fmt("%.1f", width)
        << "\" height=\"" << row_h - 8 << "\" fill=\"" << (s.kind == "backward" ? "#2a9d4b" : "#2f6fd6")
        << "\"><title>" << html_escape(s.kind) << " " << fmt("%.0f", s.start_us) << "-"
        << fmt("%.0f", s.end_us) << " us</title></rect>";
    }
  }
  const int axis_y = top + static_cast<int>(stages.size()) * row_h + 4;
  o << "<line x1=\"" << left << "\" y1=\"" << axis_y << "\" x2=\"" << w - right << "\" y2=\"" << axis_y
    << "\" stroke=\"#888\"/>";
  for (int k = 0; k <= 4; ++k) {
    const double t = span_us * k / 4;
    o << "<text x=\"" << fmt("%.0f", left + t * scale) << "\" y=\"" << axis_y + 16
      << "\" font-size=\"10\" text-anchor=\"middle\">" << fmt("%.0f", t) << " us</text>";
  }
  o << "</svg>";
  return o.str();
}

std::string render_html(const std::vector<Comparison>& rows, const ReportContext& ctx) {
  const auto groups = group_by_label(rows);
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << html_escape(ctx.title)
    << "</title>\n<style>\n"
       "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}\n"
       "table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ccc;padding:3px 8px;"
       "text-align:right}th{background:#f3f3f3}td.l,th.l{text-align:left}\n"
    << svg_chart_css()
    << "\n"
       ".charts{display:flex;flex-wrap:wrap;gap:8px}.cfg{border:1px solid #ddd;margin:12px 0;padding:8px}\n"
       "code{background:#f6f6f6;padding:1px 4px}\n</style></head><body>\n";
  o << "<h1>" << html_escape(ctx.title) << "</h1>\n";
  o << "<p>Topology <code>" << html_escape(ctx.topology) << "</code>, transfer model <code>"
    << html_escape(ctx.model) << "</code>, parameters <code>" << html_escape(ctx.params) << "</code>. "
    << rows.size() << " sizes in " << groups.size() << " configurations.</p>\n";
  if (!ctx.fit_note.empty())
    o << "<p><b>Fit and validation data:</b> " << html_escape(ctx.fit_note) << "</p>\n";
  if (!ctx.command.empty()) o << "<p>Regenerate with <code>" << html_escape(ctx.command) << "</code></p>\n";

  o << "<h2 id=\"summary\">Summary</h2>\n<table><tr><th class=\"l\">workload</th><th>sizes</th><th>MAPE</th>"
       "<th>worst</th><th>latency-bound MAPE</th><th>transition MAPE</th><th>bandwidth-bound "
       "MAPE</th><th>band coverage</th></tr>\n";
  auto summary_row = [&](const std::string& name, const std::vector<Comparison>& cs) {
    const auto s = stats(cs);
    o << "<tr><td class=\"l\">" << html_escape(name) << "</td><td>" << s.count << "</td><td>" << pct(s.mape)
      << "</td><td>" << pct(s.worst) << "</td>";
    for (Regime r : kRegimes) {
      const auto sub = in_regime(cs, r);
      o << "<td>" << (sub.empty() ? "-" : pct(stats(sub).mape)) << "</td>";
    }
    o << "<td>" << (s.banded ? pct(s.coverage) : "-") << "</td></tr>\n";
  };
  for (const auto& [w, cs] : group_by_workload(rows)) summary_row(w, cs);
  summary_row("overall", rows);
  o << "</table>\n<p>Regimes: latency-bound below 256 KiB, bandwidth-bound from 32 MiB, transition between. "
       "Error is (predicted - measured) / measured of the median time. Band coverage: share of measured "
       "medians "
       "inside the parameter set's prediction band.</p>\n";

  o << "<h2 id=\"heatmap\">Error by configuration and size</h2>\n<p>Red: commsim predicts slower than "
       "measured; "
       "blue: faster; saturated at &plusmn;25%. Hover a cell for its numbers.</p>\n"
    << svg_heatmap(groups) << "\n";

  o << "<h2 id=\"worst\">Worst cases</h2>\n<table><tr><th class=\"l\">configuration</th><th>size</th>"
       "<th>measured us</th><th>predicted us</th><th>error</th><th>run spread</th><th class=\"l\">source</th>"
       "</tr>\n";
  for (const auto& c : worst_cases(rows, 15)) {
    o << "<tr><td class=\"l\">" << html_escape(c.label()) << "</td><td>"
      << size_label(static_cast<double>(c.bytes)) << "</td><td>" << fmt("%.2f", c.measured_us) << "</td><td>"
      << fmt("%.2f", c.predicted_us) << "</td><td>" << fmt("%+.1f", 100 * c.error()) << "%</td><td>"
      << pct(100 * c.spread) << "</td><td class=\"l\">" << html_escape(c.source) << "</td></tr>\n";
  }
  o << "</table>\n";

  o << "<h2 id=\"configs\">Per configuration</h2>\n";
  for (const auto& [label, cs] : groups) {
    PlotSeries mt{"measured", plot_colour(0), {}, true}, pt{"commsim", plot_colour(1), {}, true};
    PlotSeries mb = mt, pb = pt;
    for (const auto& c : cs) {
      const auto x = static_cast<double>(c.bytes);
      mt.points.emplace_back(x, c.measured_us);
      pt.points.emplace_back(x, c.predicted_us);
      mb.points.emplace_back(x, x / c.measured_us / 1e3);  // B/us -> GB/s
      pb.points.emplace_back(x, x / c.predicted_us / 1e3);
    }
    const auto s = stats(cs);
    o << "<div class=\"cfg\"><h3>" << html_escape(label) << "</h3><p>" << s.count << " sizes, median of "
      << cs.front().runs << " run(s) each; MAPE " << pct(s.mape) << ", worst " << pct(s.worst) << " at "
      << size_label(static_cast<double>(s.worst_bytes)) << ".</p>\n<table><tr><th class=\"l\">regime</th>"
      << "<th>sizes</th><th>MAPE</th><th>worst</th><th>measured spread</th></tr>";
    for (Regime r : kRegimes) {
      const auto sub = in_regime(cs, r);
      if (sub.empty()) continue;
      const auto rs = stats(sub);
      o << "<tr><td class=\"l\">" << regime_name(r) << "</td><td>" << rs.count << "</td><td>" << pct(rs.mape)
        << "</td><td>" << pct(rs.worst) << "</td><td>" << pct(rs.spread) << "</td></tr>";
    }
    LogLogChart time;
    time.title = label + ": time";
    time.x_label = "message size";
    time.y_label = "time (us)";
    time.x_ticks = PlotXTicks::Bytes;
    LogLogChart bandwidth = time;
    bandwidth.title = label + ": algorithm bandwidth";
    bandwidth.y_label = "GB/s";
    o << "</table><div class=\"charts\">" << svg_loglog(time, {mt, pt}) << svg_loglog(bandwidth, {mb, pb})
      << "</div></div>\n";
  }

  if (ctx.timeline) {
    const TimelinePair& t = *ctx.timeline;
    double span = 0;
    for (const auto* side : {&t.measured, &t.simulated}) {
      for (const auto& stage : *side) {
        for (const auto& s : stage) span = std::max(span, s.end_us);
      }
    }
    o << "<h2 id=\"timeline\">Pipeline timeline: measured and simulated</h2>\n<p>" << html_escape(t.label)
      << ". Compute kernels per stage (forward blue, backward green) in one step, from each stage's "
         "iteration "
         "start; the gaps are the pipeline bubble and exposed communication. Step time measured "
      << fmt("%.0f", t.measured_step_us) << " us, simulated " << fmt("%.0f", t.simulated_step_us) << " us ("
      << fmt("%+.1f", 100 * (t.simulated_step_us - t.measured_step_us) / t.measured_step_us)
      << "%).</p>\n<div class=\"charts\">"
      << svg_timeline("measured (commsim-measure)", t.measured, span, t.measured_step_us)
      << svg_timeline("simulated (commsim)", t.simulated, span, t.simulated_step_us) << "</div>\n";
  }
  o << "<h2 id=\"metadata\">Measurement metadata</h2>\n<table>";
  for (const auto& in : ctx.inputs)
    o << "<tr><th class=\"l\">input</th><td class=\"l\">" << html_escape(in) << "</td></tr>";
  for (const auto& [k, v] : ctx.metadata)
    o << "<tr><th class=\"l\">" << html_escape(k) << "</th><td class=\"l\">" << html_escape(v)
      << "</td></tr>";
  o << "</table>\n</body></html>\n";
  return o.str();
}

std::string render_markdown(const std::vector<Comparison>& rows, const ReportContext& ctx) {
  std::ostringstream o;
  // Every string from the inputs or the command line is escaped: Markdown renders raw HTML.
  o << "# " << markdown_escape(ctx.title) << "\n\n";
  o << "Topology " << markdown_code_span(ctx.topology) << ", transfer model " << markdown_code_span(ctx.model)
    << ", parameters " << markdown_code_span(ctx.params) << "; " << rows.size() << " sizes compared.\n\n";
  if (!ctx.fit_note.empty()) o << "Fit and validation data: " << markdown_escape(ctx.fit_note) << "\n\n";
  if (!ctx.command.empty()) o << "Regenerate with:\n\n" << markdown_code_block(ctx.command) << "\n";
  o << "## Summary\n\n| workload | sizes | MAPE | worst | latency-bound | transition | bandwidth-bound | "
       "band "
       "coverage |\n|---|---:|---:|---:|---:|---:|---:|---:|\n";
  auto summary_row = [&](const std::string& name, const std::vector<Comparison>& cs) {
    const auto s = stats(cs);
    o << "| " << md_cell(name) << " | " << s.count << " | " << pct(s.mape) << " | " << pct(s.worst);
    for (Regime r : kRegimes) {
      const auto sub = in_regime(cs, r);
      o << " | " << (sub.empty() ? "-" : pct(stats(sub).mape));
    }
    o << " | " << (s.banded ? pct(s.coverage) : "-") << " |\n";
  };
  for (const auto& [w, cs] : group_by_workload(rows)) summary_row(w, cs);
  summary_row("**overall**", rows);
  o << "\n## Per configuration\n\n| configuration | sizes | MAPE | worst | worst at "
       "|\n|---|---:|---:|---:|---:|\n";
  for (const auto& [label, cs] : group_by_label(rows)) {
    const auto s = stats(cs);
    o << "| " << md_cell(label) << " | " << s.count << " | " << pct(s.mape) << " | " << pct(s.worst) << " | "
      << size_label(static_cast<double>(s.worst_bytes)) << " |\n";
  }
  o << "\n## Worst cases\n\n| configuration | size | measured us | predicted us | error |\n"
       "|---|---:|---:|---:|---:|\n";
  for (const auto& c : worst_cases(rows, 10)) {
    o << "| " << md_cell(c.label()) << " | " << size_label(static_cast<double>(c.bytes)) << " | "
      << fmt("%.2f", c.measured_us) << " | " << fmt("%.2f", c.predicted_us) << " | "
      << fmt("%+.1f", 100 * c.error()) << "% |\n";
  }
  return o.str();
}

}  // namespace commsim::validation
