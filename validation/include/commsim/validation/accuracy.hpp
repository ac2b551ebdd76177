// Joins measured nccl-tests results with simulations of the same workload and summarises the error.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "commsim/models/params.hpp"
#include "commsim/sim/runtime.hpp"
#include "commsim/validation/nccl_tests.hpp"

namespace commsim::validation {

/// Size regimes for reporting: latency-bound below 256 KiB, bandwidth-bound from 32 MiB, transition between.
enum class Regime { Latency, Transition, Bandwidth };
Regime regime_of(std::uint64_t bytes);
const char* regime_name(Regime r);

/// The two regimes of held-out reports and prediction bands: latency-bound below models::kBandRegimeBytes
/// (1 MiB), bandwidth-bound from it.
enum class Bound { Latency, Bandwidth };
Bound bound_of(std::uint64_t bytes);
const char* bound_name(Bound b);  ///< "latency-bound (<1 MiB)", "bandwidth-bound (>=1 MiB)"

/// One measured size of one configuration, with its prediction.
struct Comparison {
  std::string workload;   ///< "sendrecv", "p2p", "exchange", "all_reduce", "pipeline", "weight-sync", ...
  std::string mode;       ///< exchange mode
  std::vector<int> gpus;  ///< topology GPU indices, rank order
  std::uint64_t bytes = 0;
  double measured_us = 0;  ///< median over repeated runs
  double predicted_us = 0;
  int runs = 0;       ///< how many runs the median is of
  double spread = 0;  ///< (max - min) / median of the measured runs
  double min_us = 0;  ///< fastest and slowest measured run
  double max_us = 0;
  double predicted_lo_us = 0;  ///< prediction band (0, 0: none attached; see with_band)
  double predicted_hi_us = 0;
  /// The part of predicted_us (us) that is given, not predicted, and so outside the band: a pipeline step's
  /// compute bound, (microbatches + (stages - 1) / chunks) x (fwd + bwd). 0 for everything else.
  double exact_us = 0;
  std::string source;  ///< file:line of the first row
  /// commsim-measure's --timing (measure/README.md, "Timing"): "pipelined" (as nccl-tests), "per-op", or
  /// "per-iteration" (a CUDA event between iterations; every run before the option existed). Empty:
  /// nccl-tests.
  std::string timing;

  double error() const { return (predicted_us - measured_us) / measured_us; }  ///< signed, relative
  bool has_band() const { return predicted_hi_us > 0; }
  bool in_band() const { return measured_us >= predicted_lo_us && measured_us <= predicted_hi_us; }
  std::string label() const;  ///< "sendrecv gpus 0,1"
};

/// The median of `v` (mean of the middle two for an even count); v must not be empty.
double median_of(std::vector<double> v);
/// The q-quantile (0..1) of `v` by linear interpolation; 0 for an empty vector.
double quantile(std::vector<double> v, double q);
/// The measured side of a comparison from its repetitions (us): median, count, fastest, slowest, spread.
void set_measured(Comparison& c, const std::vector<double>& times);

/// One cell of a CSV line, trimmed of spaces, with its 1-based column.
struct CsvCell {
  std::string text;
  int column = 1;
};
/// Splits one CSV line: double quotes protect commas ("0,2") and "" is a literal quote. Throws InputError at
/// `where` (its column set) for an unterminated quote.
std::vector<CsvCell> csv_cells(std::string_view line, const SourceLocation& where);

/// Maps nccl-tests device lines to topology GPU indices: by PCI bus id through `bus_ids` (index -> bus id as
/// in `nvidia-smi --query-gpu=index,pci.bus_id`), else by the printed CUDA device index.
struct GpuMap {
  std::vector<std::string> bus_ids;
  static GpuMap from_csv(const std::string& path);
  int gpu_of(const NcclTestsDevice& d, const std::string& where) const;
};

/// Simulates every (workload, GPU set) of `runs` (grouping repeats and taking medians per size) and returns
/// one comparison per size. Throws InputError for workloads commsim cannot simulate yet, and for GPU sets
/// that do not fit the topology.
std::vector<Comparison> compare(const std::vector<NcclTestsRun>& runs, sim::Runtime& runtime,
                                const GpuMap& map, int iterations = 3, int warmup = 1);

/// The program nccl-tests' `<op>_perf` runs on `gpus` for one size: one thread driving every GPU (-g N) or a
/// thread per GPU (-t N). Throws UsageError for an op commsim cannot simulate.
sim::Program nccl_tests_program(const std::string& op, const std::vector<int>& gpus, std::uint64_t bytes,
                                bool thread_per_gpu);
/// Throws InputError at `where` when commsim cannot simulate nccl-tests' `op`.
void check_nccl_tests_op(const std::string& op, const SourceLocation& where);

/// Throws InputError at `where` when a measured device's name (as nccl-tests or commsim-measure print it,
/// e.g. "NVIDIA H200") is not the topology's GPU model `model` ("H200"): both are resolved through the
/// hardware catalogue (an "NVIDIA H100 NVL" is not an "H100"); a name the catalogue does not know must
/// contain `model` as a word. A device or topology without a name passes.
void check_device_model(const std::string& device_name, const std::string& model, int gpu,
                        const SourceLocation& where, const std::string& file);

/// Attaches `params`' prediction band (models::band_of) to every row.
void with_band(std::vector<Comparison>& rows, const models::ModelParams& params);
/// The same for one row.
void with_band(Comparison& row, const models::ModelParams& params);

/// A commsim-measure output directory's results.json, read and checked once.
struct MeasuredRun {
  std::string dir;
  std::string file;  ///< dir + "/results.json"
  nlohmann::json doc;
};

/// Reads and checks a commsim-measure output directory. Throws InputError naming the file when results.json
/// is missing, malformed or not a complete commsim-measure output.
MeasuredRun load_measured(const std::string& dir);
/// load_measured on `text`, the contents of DIR/results.json (the fuzz targets' entry point).
MeasuredRun parse_measured(std::string_view text, const std::string& dir);

/// Simulates every row of a commsim-measure run the same way it was measured: p2p pairs, sendrecv and
/// alltoall GPU sets (with the run's launch mode) and exchange modes. Throws InputError naming the file for a
/// workload commsim cannot simulate yet, or GPUs outside the topology.
std::vector<Comparison> compare_measured(const MeasuredRun& run, sim::Runtime& runtime, int iterations = 3,
                                         int warmup = 1);
/// load_measured(dir), then compare_measured.
std::vector<Comparison> compare_measured(const std::string& dir, sim::Runtime& runtime, int iterations = 3,
                                         int warmup = 1);

/// A measure/torch output (pipeline_1f1b.py or weight_sync_broadcast.py, JSON) against the simulator with
/// --framework torch. Throws InputError naming the file for anything else.
std::vector<Comparison> compare_torch(const std::string& file, sim::Runtime& runtime, int iterations = 3,
                                      int warmup = 1);

/// One compute kernel on a timeline, in microseconds from its stage's iteration start.
struct TimelineSpan {
  std::string kind;  ///< "forward" or "backward"
  double start_us = 0;
  double end_us = 0;
};

/// A pipeline step measured and simulated, per stage: the report draws them side by side.
struct TimelinePair {
  std::string label;  ///< e.g. "pipeline gpus 0,1,2,3 batched mb 8 nccl, 64 MiB"
  std::vector<std::vector<TimelineSpan>> measured;
  std::vector<std::vector<TimelineSpan>> simulated;
  double measured_step_us = 0;
  double simulated_step_us = 0;
};

/// The first pipeline row of `run` that carries a per-kernel timeline (commsim-measure records one for
/// pipelines), with the simulated timeline of the same configuration; nullopt when there is none.
std::optional<TimelinePair> pipeline_timeline(const MeasuredRun& run, sim::Runtime& runtime);

struct ErrorStats {
  double mape = 0;   ///< mean absolute percentage error, percent
  double worst = 0;  ///< largest absolute percentage error, percent
  std::uint64_t worst_bytes = 0;
  int count = 0;
  double spread = 0;           ///< mean run-to-run spread of the measurements, percent
  int repeated = 0;            ///< rows measured more than once
  double repeated_spread = 0;  ///< mean run-to-run spread of those rows, percent (what a band compares with)
  int banded = 0;              ///< rows with a prediction band
  double coverage = 0;         ///< share of banded rows whose measurement lies inside the band, percent
  double band_width = 0;       ///< mean band width (hi - lo) / prediction, percent
};
ErrorStats stats(const std::vector<Comparison>& rows);

/// Rows grouped by Comparison::label(), each group in increasing size.
std::map<std::string, std::vector<Comparison>> group_by_label(const std::vector<Comparison>& rows);
/// Rows grouped by workload.
std::map<std::string, std::vector<Comparison>> group_by_workload(const std::vector<Comparison>& rows);
/// The rows whose size falls in regime `r`.
std::vector<Comparison> in_regime(const std::vector<Comparison>& rows, Regime r);
/// The rows whose size falls in bound `b`.
std::vector<Comparison> in_bound(const std::vector<Comparison>& rows, Bound b);

}  // namespace commsim::validation
