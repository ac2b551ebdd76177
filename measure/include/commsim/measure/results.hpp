// Crash-safe measurement output: per-configuration JSON lines (appended and flushed), an execution log, and
// final results (JSON, CSV, raw samples) written atomically. --resume skips what a previous run of the same
// plan completed, and refuses the records of any other plan.
#pragma once

#include <cstdint>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "commsim/measure/plan.hpp"
#include "commsim/measure/stats.hpp"

namespace commsim::measure {

/// How a repetition is timed (measure/README.md, "Timing"; nccl-tests' equivalent in brackets).
enum class Timing {
  Pipelined,     ///< N back-to-back operations timed as one by the host clock, launch to completion [default]
  PerOp,         ///< each operation alone: ranks aligned, launch to completion by the host clock [-z 3]
  PerIteration,  ///< back-to-back operations with a CUDA event between iterations [-I 1]; before issue 18
};
/// "pipelined", "per-op", "per-iteration".
const char* timing_name(Timing t);
/// Parses a timing name; throws UsageError listing the valid names.
Timing parse_timing(const std::string& name);
/// The timing a workload gets unless --timing says otherwise: per-op for the Pipeline family (pipeline
/// steps), pipelined otherwise.
Timing default_timing(const std::string& workload);

/// One repetition of one configuration: the per-iteration times of its timed iterations.
struct Sample {
  int config = 0;
  int rep = 0;
  std::vector<double> iteration_us;  ///< per timed iteration, mean over the GPUs
  double rep_time_us = 0;  ///< total over the timed iterations / iterations, slowest GPU (0: unknown)
  /// Pipelined timing: the GPU's own view, the CUDA-event span of the N operations / N, slowest GPU (us; 0:
  /// not recorded). Beside the host time it shows what launch and completion add.
  double gpu_time_us = 0;
  bool failed = false;
  std::string error;
  std::int64_t cpu_start_ns = 0;  ///< CLOCK_REALTIME, for the execution log
  std::int64_t cpu_end_ns = 0;
  /// Pipelines: for the last timed iteration, per rank, the compute kernels as
  /// [{"kind": "forward"|"backward", "start_us", "end_us"}] from that iteration's start (null otherwise).
  nlohmann::json timeline;

  /// The repetition's per-operation time, as nccl-tests' time column: rep_time_us, else the mean iteration.
  double time_us() const;
};

/// One rank's share of a repetition, as one process reports it (thread launch: every rank; MPI: its own).
struct RankRecord {
  int rank = 0;                      ///< position in the configuration's GPU list
  std::vector<double> iteration_us;  ///< per timed iteration (per-op: host clock; per-iteration: events)
  nlohmann::json timeline;           ///< pipelines: this rank's compute-kernel spans (null otherwise)
  double pipelined_us = 0;           ///< pipelined: host time of the N operations / N on this rank (us)
  double gpu_span_us = 0;            ///< pipelined: CUDA-event span of the N operations / N on this rank (us)
};

/// Serializes the records one process drove, for gathering to the writing process.
std::string encode_rank_records(const std::vector<RankRecord>& records);

/// Combines the gathered records of every process into `s`. Pipelined records (pipelined_us > 0): rep_time_us
/// is the mean over ranks of the host time per operation (nccl-tests' default -a 1 average), iteration_us
/// that one value, gpu_time_us the slowest rank's event span. Otherwise iteration_us[i] is the mean over
/// ranks of iteration i and rep_time_us the slowest rank's total over the timed iterations divided by their
/// count. timeline lists the ranks in order. Throws Error when a rank is missing or reported twice, or when
/// ranks timed different numbers of iterations.
void combine_rank_records(const std::vector<std::string>& encoded, int nranks, Sample& s);

/// The hash that identifies a plan, 16 hex digits (FNV-1a, 64 bits) of `plan_description`'s JSON text. Every
/// record carries it; --resume merges only records of the same plan.
std::string plan_hash(const nlohmann::json& plan_description);

/// What a plan is, as JSON for plan_hash: every configuration (workload, its own flags, GPUs in rank order,
/// sizes in bytes, modes, pipeline shape and compute in us) in canonical order, and `settings`, the flags
/// that change what a repetition measures (seed, timing, warmup and timed iterations, launch, buffers, ...).
/// The repetition count is not part of it: a resumed run may ask for more repetitions.
nlohmann::json plan_description(const std::vector<Config>& configs, const nlohmann::json& settings);

/// The hash of the machine a run measures (its topology): every GPU's host, index, name, UUID and PCI bus id
/// (`gpus`, as metadata.json lists them) and the `nvidia-smi topo -m` text of the writing host.
std::string machine_hash(const nlohmann::json& gpus, const std::string& topo);

/// What --resume found in a results.jsonl, before anything is written.
struct ResumeScan {
  std::string file;               ///< DIR/results.jsonl
  bool exists = false;            ///< false: nothing to resume, the run starts from scratch
  std::size_t records = 0;        ///< records of this plan kept, one per (config, rep)
  std::size_t duplicates = 0;     ///< further records of a (config, rep) already kept: ignored
  int first_duplicate_line = 0;   ///< 1-based line of the first ignored duplicate (0: none)
  std::string machine;            ///< the machine hash of the kept records ("" when they carry none)
  int torn_line = 0;              ///< 1-based line of a torn (cut short or unreadable) last record; 0: none
  std::uintmax_t keep_bytes = 0;  ///< the file's length without the torn last line
  std::uintmax_t torn_bytes = 0;  ///< that line's length in bytes
  bool missing_newline = false;   ///< the last record is whole but its newline was not written
  std::set<std::pair<int, int>> done;  ///< (config, rep) of the kept records
  std::vector<nlohmann::json> lines;   ///< the kept records, in file order
};

/// Reads DIR/results.jsonl for --resume without changing it. Every record must be a JSON object with a
/// config_id in [0, `configs`), a rep >= 0, the time and failure fields, and `plan` as its plan hash.
/// Throws UsageError naming the file and line when a record belongs to another plan (or to a run from before
/// plans were recorded), and InputError (file:line) when a record before the last is unreadable; an
/// unreadable or cut-short last record is reported in `torn_line`, not thrown.
ResumeScan scan_results(const std::string& dir, const std::string& plan, std::size_t configs);
/// scan_results on `text`, the contents of `file` (a results.jsonl that exists; the fuzz target's entry
/// point).
ResumeScan scan_results_text(std::string_view text, const std::string& file, const std::string& plan,
                             std::size_t configs);

class ResultStore {
 public:
  /// Opens DIR (creating it) for the plan whose hash is `plan` (`configs` configurations). Without `resume`,
  /// an existing results.jsonl is an error (never overwritten). With it, the file is read by scan_results
  /// (throwing as it does), a torn last line is cut off the file and a missing final newline written, so
  /// that new records start on a line of their own; `resumed()` says what was found.
  ResultStore(std::string dir, bool resume, std::string plan = "", std::size_t configs = kAnyConfigs);
  /// For stores opened without a plan (tests): config ids are not range-checked.
  static constexpr std::size_t kAnyConfigs = static_cast<std::size_t>(-1);
  const std::string& dir() const { return dir_; }
  bool done(int config, int rep) const { return done_.count({config, rep}) > 0; }
  std::size_t completed() const { return done_.size(); }
  /// What --resume found (records kept, duplicates ignored, a torn line dropped).
  const ResumeScan& resumed() const { return resumed_; }
  /// The hash of the machine measured (machine_hash), written into every record from now on. Throws
  /// UsageError when resumed records were measured on another machine, before anything is written.
  void set_machine(const std::string& machine);

  /// Appends one repetition's result as a JSON line and flushes it to disk, and adds a line to exec_log.csv.
  void append(const Config& c, const Sample& s);
  /// Writes results.json, results.csv and samples.csv atomically from every line recorded (this run and
  /// resumed).
  void finalize(const std::vector<Config>& configs, const nlohmann::json& metadata) const;
  /// Writes DIR/name atomically.
  void write(const std::string& name, const std::string& contents) const;

 private:
  std::string dir_;
  std::string plan_;
  std::string machine_;
  ResumeScan resumed_;
  std::set<std::pair<int, int>> done_;
  std::vector<nlohmann::json> lines_;
  std::ofstream jsonl_;
  std::ofstream exec_log_;
};

/// Transport NCCL reported per (device, device) in its INFO log: "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM".
/// Returns (src device, dst device, transport text) triples, one per distinct pair.
std::vector<std::tuple<int, int, std::string>> parse_nccl_transports(const std::string& log);

/// The result-file tag commsim-measure writes (validation/schema/results.schema.json): times in
/// microseconds, sizes in bytes, bandwidths in GB/s. Readers still take "commsim.results/1" (the same rows)
/// and "commsim.weight_sync/1" (timings in seconds, one object per repetition).
inline constexpr const char* kResultsSchema = "commsim.results/2";

/// A weight-sync run as results.json: `raw` (run_weight_sync's fields, timings in seconds under "once" and
/// "metrics") with its timings turned into rows {workload, model, method, tensors, bytes, timing, time_us,
/// rep, warmup} in microseconds, one per timing and repetition (the one-off phases without rep), as
/// `commsim simulate weight-sync` writes them. Throws Error when a timing is not a number.
nlohmann::json weight_sync_document(const nlohmann::json& raw);
/// Its results.csv: rep, warmup, timing, time_us (rep and warmup empty for the one-off phases).
std::string weight_sync_csv(const nlohmann::json& document);

}  // namespace commsim::measure
