// Crash-safe measurement output: per-configuration JSON lines (appended and flushed), an execution log, and
// final results (JSON, CSV, raw samples) written atomically. --resume skips what a previous run completed.
#pragma once

#include <cstdint>
#include <fstream>
#include <set>
#include <string>
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

class ResultStore {
 public:
  /// Opens DIR (creating it). Without `resume`, an existing results.jsonl is an error (never overwritten).
  ResultStore(std::string dir, bool resume);
  const std::string& dir() const { return dir_; }
  bool done(int config, int rep) const { return done_.count({config, rep}) > 0; }
  std::size_t completed() const { return done_.size(); }

  /// Appends one repetition's result as a JSON line and flushes it to disk, and adds a line to exec_log.csv.
  void append(const Config& c, const Sample& s);
  /// Writes results.json, results.csv and samples.csv atomically from every line recorded (this run and
  /// resumed).
  void finalize(const std::vector<Config>& configs, const nlohmann::json& metadata) const;
  /// Writes DIR/name atomically.
  void write(const std::string& name, const std::string& contents) const;

 private:
  std::string dir_;
  std::set<std::pair<int, int>> done_;
  std::vector<nlohmann::json> lines_;
  std::ofstream jsonl_;
  std::ofstream exec_log_;
};

/// Transport NCCL reported per (device, device) in its INFO log: "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM".
/// Returns (src device, dst device, transport text) triples, one per distinct pair.
std::vector<std::tuple<int, int, std::string>> parse_nccl_transports(const std::string& log);

}  // namespace commsim::measure
