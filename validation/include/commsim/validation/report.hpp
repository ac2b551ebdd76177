// Validation reports: a self-contained HTML page (inline SVG plots) and a Markdown summary of joined rows.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "commsim/validation/accuracy.hpp"

namespace commsim::validation {

/// What the report says about how it was made. Every string is escaped when rendered.
struct ReportContext {
  std::string title = "commsim validation report";
  std::string command;                                        ///< the command that regenerates the report
  std::string topology;                                       ///< topology file
  std::string model;                                          ///< transfer model name
  std::string params;                                         ///< parameter set name or file
  std::string fit_note;                                       ///< which data the parameters were fitted on
  std::vector<std::string> inputs;                            ///< measurement files and directories
  std::vector<std::pair<std::string, std::string>> metadata;  ///< measurement metadata, key -> value
  std::optional<TimelinePair> timeline;  ///< one pipeline step, measured and simulated, drawn side by side
};

/// The metadata of a commsim-measure run (GPUs, driver, NCCL, host, date, command line, temperatures and
/// clocks from the NVML summary) as key/value lines prefixed by the directory's name.
std::vector<std::pair<std::string, std::string>> measured_metadata(const MeasuredRun& run);

/// One self-contained HTML page: summary, log-log time and bandwidth plots per configuration, an error
/// heatmap over configurations and sizes, error per size regime, the worst cases, a measured and a simulated
/// pipeline timeline side by side (when the context has one) and the metadata. It
/// references no external resource, so it opens offline.
std::string render_html(const std::vector<Comparison>& rows, const ReportContext& ctx);

/// The same summary, per-regime table and worst cases as Markdown.
std::string render_markdown(const std::vector<Comparison>& rows, const ReportContext& ctx);

}  // namespace commsim::validation
