// How long a commsim-measure plan will take: the timed operations predicted by commsim's own simulator for
// the machine, plus what the tool spends around them (start, communicators, warmup and drift windows,
// writing).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "commsim/measure/plan.hpp"
#include "commsim/sim/runtime.hpp"

namespace commsim::validation {

using measure::Config;

/// What commsim-measure spends besides the timed operations, in seconds. Measured and fitted on the runs of
/// validation/data/h200x2/estimate/ (README there: which value comes from which runs, and the held-out
/// check).
struct RunCosts {
  double startup_s = 0;       ///< process start to the metadata written: CUDA/NVML init, captures, planning
  double per_gpu_s = 0;       ///< per GPU driven: its streams, events and buffers (the Runner's setup)
  double comm_init_s = 0;     ///< one NCCL communicator: created for its first configuration, destroyed
  double per_run_s = 0;       ///< one repetition of one configuration, besides its iterations
  double per_timed_op_s = 0;  ///< per iteration timed alone (--timing per-op or per-iteration)
  double teardown_s = 0;      ///< results and summaries written, process exit
  double weight_sync_startup_s = 0;  ///< weight-sync: process start and exit (no captures, no NVML)
  double fill_bytes_per_s = 0;       ///< weight-sync: allocating, filling and freeing the model copies (B/s)
  double band = 0;                   ///< relative spread of the fixed costs (0.3: +-30%)
  double operations_band = 0;        ///< relative spread of the simulated operations
  static RunCosts fitted();          ///< the fitted values (2x H200, commsim-measure 0.x, NCCL 2.28)
};

/// What a plan runs, besides its configurations.
struct PlanShape {
  int reps = 1;
  int warmup = 5;
  int iterations = 20;
  bool timed_alone = false;      ///< --timing per-op or per-iteration: each iteration synchronised
  bool thread_per_gpu = true;    ///< --launch thread-per-gpu or mpi (false: one thread drives every GPU)
  double drift_seconds = 0;      ///< --drift-seconds: two windows of this length (s)
  double thermal_timeout_s = 0;  ///< --thermal-warmup given: at most this long (s); 0: no thermal warmup
  int gpus = 0;                  ///< GPUs the process drives
};

/// The estimate of one plan, in seconds.
struct PlanEstimate {
  std::vector<double> op_us;  ///< per configuration (by id): predicted time of one operation or step (us)
  int communicators = 0;      ///< distinct communicators the plan opens
  double startup_s = 0;       ///< start, GPU contexts
  double communicators_s = 0;
  double thermal_max_s = 0;  ///< thermal warmup: between 0 and this
  double drift_s = 0;        ///< the two drift windows
  double operations_s = 0;   ///< warmup and timed iterations of every repetition (simulated)
  double per_run_s = 0;      ///< the tool's own work around each repetition
  double teardown_s = 0;
  double total_s = 0;  ///< best guess (thermal warmup counted as 0)
  double low_s = 0;    ///< the band around it
  double high_s = 0;   ///< (thermal warmup counted at its timeout)
};

/// Configurations above this count are not estimated (each is simulated once).
inline constexpr std::size_t kMaxEstimatedConfigs = 20000;

/// Simulates one operation (or pipeline step) of every configuration on `runtime` and adds the tool's costs.
/// Throws UsageError when a configuration's GPUs are not in the runtime's topology.
PlanEstimate estimate_plan(const std::vector<Config>& configs, const PlanShape& shape, sim::Runtime& runtime,
                           const RunCosts& costs = RunCosts::fitted());

/// The simulated time of one configuration's operation (pipeline: one step), microseconds.
double predicted_op_us(const Config& config, bool thread_per_gpu, sim::Runtime& runtime);

/// A weight push as `commsim-measure weight-sync` runs it: one warmup push and `reps` timed ones.
struct WeightSyncShape {
  std::string model;               ///< a name from workloads/specs/models.toml
  int from = 0;                    ///< trainer GPU
  std::vector<int> to;             ///< rollout GPUs
  std::string method;              ///< broadcast | p2p-engine
  int streams = 4;                 ///< p2p-engine: copy streams per rollout GPU
  std::uint64_t bucket_bytes = 0;  ///< broadcast: bucket size (0: per tensor)
  int reps = 3;
};

/// The estimate of a weight-sync run (seconds): `op_us` holds one entry, the simulated push (us);
/// `communicators` is 1 for broadcast, 0 for the copy engine; `per_run_s` is the model copies' fill.
PlanEstimate estimate_weight_sync(const WeightSyncShape& w, sim::Runtime& runtime,
                                  const RunCosts& costs = RunCosts::fitted());

/// "12.3 s (9.8-15.1 s)": the total with its band.
std::string format_estimate(const PlanEstimate& e);

}  // namespace commsim::validation
