// Registration of commsim's subcommands on the CLI11 application.
#pragma once

#include <CLI/CLI.hpp>

namespace commsim::cli {

/// Adds `commsim topo ...` (show, gpus, presets) to `app`.
void add_topo_command(CLI::App& app);
/// Adds `commsim simulate ...` (point-to-point, collectives, pipeline, weight-sync, grad-sync) to `app`.
void add_simulate_command(CLI::App& app);
/// Adds `commsim model list|show` (bundled model specs) to `app`.
void add_model_command(CLI::App& app);
/// Adds `commsim validate` (nccl-tests logs against predictions) to `app`.
void add_validate_command(CLI::App& app);
/// Adds `commsim calibrate` (fit parameters to commsim-measure data) to `app`.
void add_calibrate_command(CLI::App& app);
/// Adds `commsim advise pipeline` (which P2P mode wins, and why) to `app`.
void add_advise_command(CLI::App& app);
/// Adds `commsim sweep SPEC.toml` (grids of what-ifs, shards) and `commsim sweep merge` to `app`.
void add_sweep_command(CLI::App& app);
/// Adds `commsim plot` (a log-log SVG chart of two columns of TSV or CSV files) to `app`.
void add_plot_command(CLI::App& app);

}  // namespace commsim::cli
