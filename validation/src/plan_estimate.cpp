// Wall-time estimate of a commsim-measure plan: simulated operations plus the tool's fitted own costs.
#include "commsim/validation/plan_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <utility>

#include "commsim/core/error.hpp"
#include "commsim/core/limits.hpp"
#include "commsim/sim/schedules.hpp"
#include "commsim/sim/sim_workload.hpp"
#include "commsim/workloads/model_spec.hpp"
#include "commsim/workloads/registry.hpp"

namespace commsim::validation {

RunCosts RunCosts::fitted() {
  // 2x H200, start vm-20261122T230357Z, validation/data/h200x2/estimate/run.sh (README there). Measured
  // directly (metadata.json "wall_clock", medians of 20 runs): startup_s, per_gpu_s. Fitted by least squares
  // on the four calibration plans c1-c4, two passes each: comm_init_s, per_run_s, and teardown_s (the rest of
  // the fitted constant). Fitted on the two weight-sync runs: weight_sync_startup_s and fill_bytes_per_s.
  // Not fitted (no calibration plan times per operation): per_timed_op_s, a kernel launch and a host
  // synchronisation. The bands cover every held-out error of that run (12 of 12) and every calibration run
  // but the first process of the machine start (-17.7%: a slower first start).
  RunCosts c;
  c.startup_s = 0.37;
  c.per_gpu_s = 0.14;
  c.comm_init_s = 0.425;
  c.per_run_s = 411e-6;
  c.per_timed_op_s = 14e-6;
  c.teardown_s = 0.48;
  c.weight_sync_startup_s = 0.24;
  c.fill_bytes_per_s = 260e9;
  c.band = 0.20;
  c.operations_band = 0.15;
  return c;
}

double predicted_op_us(const Config& c, bool thread_per_gpu, sim::Runtime& runtime) {
  const workloads::WorkloadSpec& spec = workloads::find_workload(c.workload);
  const int n = static_cast<int>(runtime.topology().gpus.size());
  sim::RowRequest row;
  row.gpus = c.gpus;
  if (spec.family == workloads::Family::PointToPoint) row.gpus = {c.src, c.dst};
  for (int g : row.gpus) {
    if (g < 0 || g >= n) {
      throw UsageError("GPU " + std::to_string(g) + " of " + c.tag() +
                       " is not in the estimate's topology (" + std::to_string(n) +
                       " GPUs); give --topology the machine the plan runs on");
    }
  }
  row.bytes = c.bytes;
  // Point-to-point and pair workloads are simulated with one host thread per GPU only (as validate does).
  row.thread_per_gpu = thread_per_gpu || spec.family == workloads::Family::PointToPoint ||
                       spec.family == workloads::Family::Pair;
  if (spec.rooted) {
    const auto it = std::find(c.gpus.begin(), c.gpus.end(), c.root);
    row.root = it == c.gpus.end() ? 0 : static_cast<int>(it - c.gpus.begin());
  }
  row.mode = c.mode;
  row.microbatches = c.microbatches;
  row.chunks = c.chunks;
  row.fwd = seconds_to_picoseconds(c.fwd_us / 1e6, "--fwd-us");
  row.bwd = seconds_to_picoseconds(c.bwd_us / 1e6, "--bwd-us");
  row.args = c.args;
  sim::Program p = sim::sim_workload(c.workload).program(row);
  p.warmup = 1;
  p.iterations = 2;
  return static_cast<double>(runtime.run(std::move(p)).per_iteration) / 1e6;
}

namespace {
/// The total and its band from the parts: the tool's fixed costs within `band`, the simulated operations
/// within `operations_band`, the drift windows exact, and the thermal warmup (up to its timeout) in the upper
/// end only.
void add_up(PlanEstimate& e, const RunCosts& k) {
  const double fixed = e.startup_s + e.communicators_s + e.per_run_s + e.teardown_s;
  e.total_s = fixed + e.drift_s + e.operations_s;
  e.low_s = fixed * (1 - k.band) + e.drift_s + e.operations_s * (1 - k.operations_band);
  e.high_s = fixed * (1 + k.band) + e.drift_s + e.operations_s * (1 + k.operations_band) + e.thermal_max_s;
}
}  // namespace

PlanEstimate estimate_plan(const std::vector<Config>& configs, const PlanShape& s, sim::Runtime& runtime,
                           const RunCosts& k) {
  if (configs.size() > kMaxEstimatedConfigs) {
    throw UsageError(std::to_string(configs.size()) +
                     " configurations: the estimate simulates each one, up to " +
                     std::to_string(kMaxEstimatedConfigs));
  }
  PlanEstimate e;
  std::set<std::pair<std::vector<int>, int>> comms;  // (GPU set, slot), as the Runner opens them
  double per_rep_ops_s = 0;
  double per_rep_runs_s = 0;
  const int per_run_iterations = s.warmup + s.iterations;
  e.op_us.assign(configs.size(), 0.0);
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const Config& c = configs[i];
    const double op_us = predicted_op_us(c, s.thread_per_gpu, runtime);
    e.op_us[i] = op_us;
    per_rep_ops_s += per_run_iterations * op_us / 1e6;
    per_rep_runs_s += k.per_run_s + (s.timed_alone ? per_run_iterations * k.per_timed_op_s : 0.0);
    comms.insert({c.gpus, 0});
    if (c.mode == "overlapped") comms.insert({c.gpus, 1});
  }
  e.communicators = static_cast<int>(comms.size());
  e.startup_s = k.startup_s + k.per_gpu_s * s.gpus;
  e.communicators_s = k.comm_init_s * e.communicators;
  e.thermal_max_s = s.thermal_timeout_s;
  e.drift_s = s.drift_seconds > 0 ? 2 * s.drift_seconds : 0;
  e.operations_s = per_rep_ops_s * s.reps;
  e.per_run_s = per_rep_runs_s * s.reps;
  e.teardown_s = k.teardown_s;
  add_up(e, k);
  return e;
}

PlanEstimate estimate_weight_sync(const WeightSyncShape& w, sim::Runtime& runtime, const RunCosts& k) {
  const workloads::ModelSpec& spec = workloads::model_spec(w.model);
  const int n = static_cast<int>(runtime.topology().gpus.size());
  std::vector<int> gpus{w.from};
  gpus.insert(gpus.end(), w.to.begin(), w.to.end());
  for (int g : gpus) {
    if (g < 0 || g >= n) {
      throw UsageError("GPU " + std::to_string(g) + " is not in the estimate's topology (" +
                       std::to_string(n) + " GPUs); give --topology the machine the push runs on");
    }
  }
  sim::Program p;
  if (w.method == "broadcast") {
    p = sim::broadcast_pieces_program(gpus, sim::tensor_pieces(spec, w.bucket_bytes));
  } else if (w.method == "p2p-engine") {
    p = sim::copy_engine_program(w.from, w.to, sim::tensor_pieces(spec, 0), w.streams);
  } else {
    throw UsageError("--method " + w.method + ": valid: broadcast, p2p-engine");
  }
  p.warmup = 0;  // one push from idle GPUs, as the tool times each repetition
  p.iterations = 1;
  PlanEstimate e;
  e.op_us = {static_cast<double>(runtime.run(std::move(p)).per_iteration) / 1e6};
  std::uint64_t model_bytes = 0;
  for (const auto& t : spec.tensors()) model_bytes += (t.bytes + 255) / 256 * 256;
  e.communicators = w.method == "broadcast" ? 1 : 0;
  e.startup_s = k.weight_sync_startup_s + k.per_gpu_s * static_cast<double>(gpus.size());
  e.communicators_s = k.comm_init_s * e.communicators;
  e.per_run_s = k.fill_bytes_per_s > 0
                    ? static_cast<double>(model_bytes) * static_cast<double>(gpus.size()) / k.fill_bytes_per_s
                    : 0;
  e.operations_s = (w.reps + 1) * e.op_us[0] / 1e6;
  add_up(e, k);
  return e;
}

namespace {
std::string seconds_text(double s) {
  char buf[32];
  if (s < 100) {
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f s", s);
  }
  return buf;
}
}  // namespace

std::string format_estimate(const PlanEstimate& e) {
  std::string low = seconds_text(e.low_s);
  low.resize(low.size() - 2);  // "9.8-15.1 s"
  return seconds_text(e.total_s) + " (" + low + "-" + seconds_text(e.high_s) + ")";
}

}  // namespace commsim::validation
