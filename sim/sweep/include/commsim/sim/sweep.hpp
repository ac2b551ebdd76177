// `commsim sweep`: a grid of what-ifs (topologies x parameter sets x NCCL knobs x GPU sets x workloads x
// sizes), run on every core, split into shards for a cluster launcher (Slurm job arrays, MPI), and merged
// back.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace commsim::sim {

/// Axes a command line replaces in a spec (commsim sweep -b/-e/-f, --gpus, -g, -n, -w); unset: the spec's.
struct SweepOverrides {
  std::optional<std::vector<std::uint64_t>> sizes;  ///< bytes
  std::optional<std::string> gpus;                  ///< one GPU list ("0-3")
  std::optional<int> iterations;
  std::optional<int> warmup;
};

/// A sweep specification, read from TOML (see sim/README.md, "Sweeps"). Paths are as written in the file,
/// resolved against the spec's directory when they exist there, else against the working directory.
struct SweepSpec {
  std::string name;
  std::string file;  ///< where it was read from
  std::vector<std::string> topologies;
  std::vector<std::string> params;                 ///< "default" or a parameter file
  std::vector<std::vector<std::string>> nccl_env;  ///< knob sets, each KEY=VALUE...
  std::vector<std::string> gpus;                   ///< GPU lists ("all", "0-15")
  std::vector<std::string> workloads;  ///< all_reduce ... alltoall, sendrecv, p2p (first two GPUs)
  std::vector<std::uint64_t> sizes;    ///< bytes
  int iterations = 3;
  int warmup = 1;
  std::uint64_t hash = 0;  ///< of the file's text: shards of different specs are never merged

  /// Parses and checks a spec; InputError with file, line and column for bad values or unknown keys.
  static SweepSpec parse(std::string_view text, const std::string& file);
  static SweepSpec load(const std::string& path);
  /// Replaces the axes `o` sets, and folds them into `hash` (shards run with other overrides do not merge).
  /// Throws UsageError for out-of-range values.
  void override_axes(const SweepOverrides& o);
  /// Points in the grid (the product of the axes).
  std::size_t points() const;
};

/// One point of the grid, by index: axes vary slowest to fastest as topology, params, nccl_env, gpus,
/// workload, size.
struct SweepPoint {
  std::size_t index = 0;
  std::size_t topology = 0, params = 0, nccl_env = 0, gpus = 0, workload = 0, size = 0;
};
SweepPoint sweep_point(const SweepSpec& spec, std::size_t index);

/// Shard `k` of `n` takes the points whose index % n == k. Parses "K/N"; "auto" reads the launcher's
/// environment (SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT, then OMPI_COMM_WORLD_RANK/SIZE,
/// PMI_RANK/PMI_SIZE, SLURM_PROCID/SLURM_NTASKS). Throws UsageError when it cannot.
struct Shard {
  int k = 0;
  int n = 1;
  static Shard parse(const std::string& text);
  bool owns(std::size_t index) const {
    return index % static_cast<std::size_t>(n) == static_cast<std::size_t>(k);
  }
};

/// One result row.
struct SweepRow {
  std::size_t index = 0;
  std::string topology, params, nccl_env, gpus, workload;
  /// The parameter set the point ran with (its name): `params` "default" resolves, as simulate does, to the
  /// fitted set of the topology's GPU model where there is one (h200 for H200s), else nccl-default.
  std::string param_set;
  int ngpus = 0;
  std::uint64_t bytes = 0;
  double time_us = 0, algbw_gbps = 0, busbw_gbps = 0;
  double time_us_lo = 0, time_us_hi = 0;  ///< the set's prediction band around time_us (us)
  std::string algorithm;                  ///< collective algorithm, or the P2P transport
  std::string protocol;
  std::string error;  ///< non-empty when the point failed
};

/// What run_sweep reports as it goes (each may be empty): `start` once, before any point, with every point's
/// estimated work in the shard's order (sweep_work); `done` after each point with its position in that order
/// (serialized).
struct SweepProgress {
  std::function<void(const std::vector<double>& work)> start;
  std::function<void(std::size_t item)> done;
};

/// Each of the shard's points' estimated cost, in its order, for a progress ETA: (1,000 + the transfers its
/// program moves) x (iterations + warmup) (core/progress.hpp point_work). Measured
/// (sim/sweep/tests/point-times.tsv): a point's simulation time follows its transfers (an alltoall on 256
/// GPUs, 65,280 transfers a run: 1.3 s at every size from 1 KiB to 256 MiB; a sendrecv on 256 GPUs: 2 ms),
/// not its bytes.
std::vector<double> sweep_work(const SweepSpec& spec, const Shard& shard);

/// Runs the shard's points on `jobs` threads, reporting to `progress`. Rows come back in point order.
std::vector<SweepRow> run_sweep(const SweepSpec& spec, const Shard& shard, int jobs,
                                const SweepProgress& progress = {});

/// The rows as CSV (RFC 4180, numbers at round-trip precision, no comment lines): a header, then one row per
/// point with status "ok" or "failed"; a failed point's time and bandwidth cells are empty and its error
/// column says why.
std::string sweep_csv(const std::vector<SweepRow>& rows);
/// The CSV's sidecar (JSON, schema "commsim.sweep_meta/1"): the spec's name and hash, the shard "K/N", the
/// points of the whole grid, the rows and failed points of this file, the columns.
std::string sweep_meta(const SweepSpec& spec, const Shard& shard, const std::vector<SweepRow>& rows);

/// One shard's output as read back: its CSV and its sidecar, with their paths for messages.
struct SweepFile {
  std::string file;       ///< the CSV's path
  std::string csv;        ///< its text
  std::string meta_file;  ///< the sidecar's path
  std::string meta;       ///< its text
};
/// A merge's output: the merged CSV and its sidecar (shard 0/1), and the sweep's name.
struct SweepMerged {
  std::string csv;
  std::string meta;
  std::string name;
};
/// Merges shard files of one spec: every shard exactly once, same hash, no point twice. Fills `rows`.
/// Throws InputError naming the file at fault.
SweepMerged merge_sweep_files(const std::vector<SweepFile>& files, std::vector<SweepRow>& rows);
/// The sidecar's path beside a sweep CSV: "DIR/shard-0-of-2.csv" -> "DIR/shard-0-of-2.meta.json".
std::string sweep_meta_path(const std::string& csv_path);
/// A self-contained HTML page: per topology and workload, time against size on log-log axes (inline SVG),
/// then every row.
std::string sweep_html(const std::string& title, const std::vector<SweepRow>& rows);

}  // namespace commsim::sim
