// commsim-measure: runs commsim's workloads on real GPUs with NCCL and writes the simulator's result schema.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "commsim/core/args.hpp"
#include "commsim/core/csv.hpp"
#include "commsim/core/error.hpp"
#include "commsim/core/limits.hpp"
#include "commsim/core/output_guard.hpp"
#include "commsim/core/text.hpp"
#include "commsim/core/units.hpp"
#include "commsim/measure/plan.hpp"
#include "commsim/measure/results.hpp"
#include "commsim/models/nccl_env.hpp"
#include "commsim/models/params.hpp"
#include "commsim/models/transfer.hpp"
#include "commsim/sim/schedules.hpp"
#include "commsim/topo/load.hpp"
#include "commsim/validation/plan_estimate.hpp"
#include "commsim/workloads/cli_flags.hpp"
#include "commsim/workloads/model_spec.hpp"
#include "commsim/workloads/registry.hpp"
#include "gpu/check.hpp"
#include "gpu/kernels.hpp"
#include "gpu/measure_workload.hpp"
#include "gpu/nvml.hpp"
#include "gpu/runner.hpp"
#include "gpu/weight_sync.hpp"
#include "world.hpp"

extern char** environ;

namespace commsim::measure {
namespace {

using validation::estimate_plan;
using validation::estimate_weight_sync;
using validation::format_estimate;
using validation::kMaxEstimatedConfigs;
using validation::PlanEstimate;
using validation::PlanShape;
using validation::WeightSyncShape;

/// The end of `commsim-measure --help` and every subcommand's.
constexpr const char* kFooter = R"(
EXAMPLES
  commsim-measure p2p --pairs all --out results/p2p              every directed pair, 1 B .. 1 GiB
  commsim-measure sendrecv --gpus 0-3 --out results/sr
  commsim-measure exchange --pair 0,1 --mode batched --out results/ex
  commsim-measure all_reduce --gpus all --out results/ar
  commsim-measure p2p --dry-run -g 4 --format csv                the plan for 4 GPUs, without touching a GPU
  commsim-measure sendrecv -g 4 -b 8 -e 128M -f 2 -n 20 -w 5 --out results/sr   nccl-tests' flags

OUTPUT (in --out DIR)
  results.jsonl (one line per repetition, flushed as it completes), results.json and results.csv (median, min,
  max, mean, stdev, CV per configuration), samples.csv (every timed iteration), exec_log.csv, nvml.csv,
  metadata.json (GPUs, driver, CUDA, NCCL, environment, transports, clock drift, NVML summary), topo.txt,
  nvlink.txt, nccl_debug.*.log. --resume skips repetitions already in results.jsonl.

EXIT STATUS
  0 success; 1 CUDA/NCCL failure; 2 usage (bad flag, no GPU, too few GPUs, out of memory for a size);
  3 bad input; 4 I/O; 5 a hang the watchdog could not recover (rerun with --resume); 6 some repetitions failed.

SIZES AND TIMES
  Sizes as nccl-tests writes them: a bare number is bytes (-b 8), K/M/G are powers of 1024 (-e 128M); KB, MB,
  GB are powers of 1000 and KiB, MiB, GiB powers of 1024. Time flags take a unit (--timeout 90s, --fwd-us
  0.5ms); a bare number is in the unit the flag names (--fwd-us: us, --timeout: s, --nvml-interval-ms: ms).

The tool never changes clocks, power limits or GPU modes; it records them.)";

/// The flags every measured workload takes; the workload's own are in `args` (the registry's, Side::Measure).
struct Options {
  std::string workload;
  workloads::WorkloadArgs args;  ///< the workload's own flags (workloads::WorkloadSpec::flags)
  std::string gpus;
  std::string min_bytes = "1B", max_bytes = "1GiB";
  double factor = 2;
  int reps = 10, warmup = 5, iterations = 20;
  std::uint64_t seed = 42;
  std::string out;
  bool resume = false;
  bool dry_run = false;
  std::string format = "table";
  int gpu_count = -1;  ///< -g/--gpu-count N: GPUs 0..N-1 (a dry run plans for N without a GPU); -1: not given
  double timeout_s = 60;
  std::string launch = "thread-per-gpu";
  std::string timing;  ///< --timing; empty: default_timing(workload)
  std::string buffers = "ncclmemalloc";
  std::string worker_threads = "persistent";
  std::string nvlink_centric_sched = "on";
  std::string rotate_buffers = "on";
  std::string select_device = "when-needed";
  double drift_seconds = 30;
  double thermal_target_c = 0;
  double thermal_timeout_s = 300;
  int nvml_interval_ms = 1000;
  bool nccl_debug = true;
  std::string topology;  ///< --topology: the machine the estimate simulates (default: this one's topo -m)
  std::string params;    ///< --params: the estimate's parameter set (default: the fitted set for the GPUs)
};

std::string shell(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen((cmd + " 2>&1").c_str(), "r")) {
    char buf[4096];
    std::size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    const int rc = pclose(p);
    if (rc != 0) out += "\n[exit status " + std::to_string(rc) + "]\n";
  }
  return out;
}

std::vector<int> parse_list(const std::string& s, int count) {
  return parse_gpu_list(s.empty() ? "all" : s, count);
}

std::vector<std::uint64_t> sizes(const Options& o) {
  return size_sweep(parse_size_flag("--min-bytes", o.min_bytes), parse_size_flag("--max-bytes", o.max_bytes),
                    o.factor);
}

/// Every process's JSON array, concatenated in rank order on rank 0 (empty elsewhere).
nlohmann::json gather_arrays(const World& world, const nlohmann::json& mine) {
  nlohmann::json all = nlohmann::json::array();
  for (const std::string& part : world.gather(mine.dump())) {
    for (const auto& item : nlohmann::json::parse(part)) all.push_back(item);
  }
  return all;
}

/// GPU-vs-CPU clock drift over `seconds` for this process's GPUs (global indices `gpus`, CUDA devices
/// `cuda`), gathered from every process, in parts per million (positive: the GPU clock runs fast).
nlohmann::json drift_check(const World& world, const std::vector<int>& gpus, const std::vector<int>& cuda,
                           double seconds) {
  nlohmann::json out = nlohmann::json::array();
  const std::size_t n = gpus.size();
  std::vector<std::uint64_t> g0(n);
  std::vector<std::chrono::steady_clock::time_point> c0(n);
  for (int d : cuda) gpu_globaltimer_ns(d);  // create contexts and load the kernel first
  for (std::size_t i = 0; i < n; ++i) {
    c0[i] = std::chrono::steady_clock::now();
    g0[i] = gpu_globaltimer_ns(cuda[i]);
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  for (std::size_t i = 0; i < n; ++i) {
    const auto c1 = std::chrono::steady_clock::now();
    const std::uint64_t g1 = gpu_globaltimer_ns(cuda[i]);
    const double cpu_ns = std::chrono::duration<double, std::nano>(c1 - c0[i]).count();
    const double gpu_ns = static_cast<double>(g1 - g0[i]);
    out.push_back({{"gpu", gpus[i]},
                   {"host", world.host()},
                   {"window_us", cpu_ns / 1e3},
                   {"drift_ppm", (gpu_ns - cpu_ns) / cpu_ns * 1e6}});
  }
  return gather_arrays(world, out);
}

class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total), tty_(::isatty(STDERR_FILENO)) {
    start_ = std::chrono::steady_clock::now();
  }
  void step(const std::string& what) {
    ++done_;
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double eta = el / static_cast<double>(done_) * static_cast<double>(total_ - done_);
    if (tty_) {
      const int w = 30, f = static_cast<int>(w * done_ / total_);
      std::fprintf(stderr, "\r[%s%s] %zu/%zu ETA %4.0fs %-40s", std::string(f, '=').c_str(),
                   std::string(w - f, ' ').c_str(), done_, total_, eta, what.c_str());
      if (done_ == total_) std::fprintf(stderr, "\n");
    } else if (done_ * 10 / total_ != (done_ - 1) * 10 / total_ || done_ == total_) {
      std::fprintf(stderr, "progress: %zu/%zu runs, %.0f s elapsed, ETA %.0f s\n", done_, total_, el, eta);
    }
  }

 private:
  std::size_t total_, done_ = 0;
  bool tty_;
  std::chrono::steady_clock::time_point start_;
};

/// Phase 1, devices: the GPUs of the whole measurement (the MPI launch: one per rank). A dry run with
/// --gpu-count N plans for N GPUs without touching CUDA, so it works anywhere; without it, for the GPUs
/// up to the highest one --gpus names.
int count_devices(const Options& o, const World& world) {
  if (o.gpu_count == 0) throw UsageError("--gpu-count must be at least 1");
  if (o.gpu_count > kMaxGpus) {
    throw UsageError("refused: --gpu-count " + std::to_string(o.gpu_count) + " is more than the " +
                     std::to_string(kMaxGpus) + " GPUs one measured run may name (core/limits.hpp)");
  }
  if (o.dry_run && o.gpu_count < 0 && !o.gpus.empty() &&
      o.gpus.find_first_not_of("0123456789") == std::string::npos) {
    throw UsageError("--gpus is a GPU list (--gpus " + o.gpus + " is GPU " + o.gpus +
                     " alone); to plan for " + o.gpus + " GPUs write --gpu-count " + o.gpus + " (-g " +
                     o.gpus + ") or --gpus 0-" +
                     std::to_string(o.gpus.size() > 6 ? 0 : std::max(0L, std::stol(o.gpus) - 1)));
  }
  if (o.dry_run && o.gpu_count > 0) return o.gpu_count;
  int local_devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&local_devices);
  if (e != cudaSuccess || local_devices == 0) {
    if (o.dry_run && !o.gpus.empty() && o.gpus != "all") {
      const std::vector<int> listed = parse_gpu_list(o.gpus, kMaxGpus);
      return *std::max_element(listed.begin(), listed.end()) + 1;
    }
    if (o.dry_run && !o.topology.empty()) {  // plan for the machine the estimate's topology describes
      topo::Diagnostics diag;
      return static_cast<int>(topo::load_topology(o.topology, {}, diag).gpus.size());
    }
    if (o.dry_run)
      throw UsageError(
          "no GPU visible; give --dry-run a GPU count with --gpu-count N (e.g. -g 4), a list "
          "with --gpus (e.g. --gpus 0-3), or the machine with --topology FILE");
    throw UsageError(std::string("no GPU available") + (world.mpi() ? " on host " + world.host() : "") +
                     " (" + (e == cudaSuccess ? "0 devices" : cudaGetErrorString(e)) +
                     "); commsim-measure needs NVIDIA GPUs. --dry-run plans without one.");
  }
  if (o.gpu_count > 0 && world.mpi() && o.gpu_count != world.size()) {
    throw UsageError("--gpu-count " + std::to_string(o.gpu_count) + " under --launch mpi: the GPUs are the " +
                     std::to_string(world.size()) + " MPI ranks");
  }
  if (o.gpu_count > local_devices) {
    throw UsageError("--gpu-count " + std::to_string(o.gpu_count) + ": this machine has " +
                     std::to_string(local_devices) + " GPU(s)");
  }
  if (!world.mpi()) return o.gpu_count > 0 ? o.gpu_count : local_devices;
  if (world.local_rank() >= local_devices) {
    throw UsageError("--launch mpi: host " + world.host() + " runs " + std::to_string(world.local_size()) +
                     " ranks but has " + std::to_string(local_devices) +
                     " GPU(s); start at most one rank per GPU on each host");
  }
  return world.size();
}

/// A pipeline's own flags into `p`: its schedule, activation sizes (bytes) and emulated compute (us).
void plan_pipeline_options(const workloads::WorkloadArgs& a, PlanOptions& p) {
  const std::string& schedule = a.str("--schedule");
  const int chunks = a.integer("--chunks");
  if (schedule != "1f1b" && schedule != "interleaved")
    throw UsageError("--schedule " + schedule + ": valid: 1f1b, interleaved");
  if (schedule == "interleaved" && chunks < 2)
    throw UsageError("--schedule interleaved needs --chunks V (at least 2)");
  if (schedule == "1f1b" && chunks > 1)
    throw UsageError("--chunks " + std::to_string(chunks) + " needs --schedule interleaved");
  p.chunks = schedule == "interleaved" ? chunks : 1;
  if (a.str("--framework") != "nccl") {
    throw UsageError(
        "commsim-measure measures --framework nccl; the torch framework is measure/torch/pipeline_1f1b.py");
  }
  if (a.list("--activation-bytes").empty())
    throw UsageError("pipeline needs --activation-bytes SIZE[,SIZE...]");
  for (const auto& s : a.list("--activation-bytes"))
    p.sizes.push_back(parse_size_flag("--activation-bytes", s));
  p.microbatches = a.int_list("--microbatches");
  p.modes = a.list("--mode");
  p.fwd_us = a.number("--fwd-us");
  p.bwd_us = a.number("--bwd-us");
}

/// What a run measures: its configurations in canonical order, how each repetition is timed, and the hash
/// that every record carries (plan_hash).
struct Plan {
  std::vector<Config> configs;
  Timing timing = Timing::Pipelined;
  std::string hash;
};

/// The flags that change what a repetition measures, for the plan hash (not --reps, --out or the
/// watchdog's and logs' settings).
nlohmann::json plan_settings(const Options& o, Timing timing) {
  return {{"seed", o.seed},
          {"timing", timing_name(timing)},
          {"warmup", o.warmup},
          {"iterations", o.iterations},
          {"launch", o.launch},
          {"buffers", o.buffers},
          {"worker_threads", o.worker_threads},
          {"nvlink_centric_sched", o.nvlink_centric_sched},
          {"rotate_buffers", o.rotate_buffers},
          {"select_device", o.select_device}};
}

/// Phase 2, plan: the workload's flags by its family, the sizes as nccl-tests rounds them, the
/// configurations.
Plan plan_run(const Options& o, int devices) {
  const workloads::WorkloadSpec& spec = workloads::find_workload(o.workload);
  const workloads::WorkloadArgs& a = o.args;
  PlanOptions p;
  p.workload = o.workload;
  p.args = o.args;
  p.gpu_count = devices;
  p.gpus = parse_list(o.gpus, devices);
  if (spec.family == workloads::Family::PointToPoint) {
    p.src = a.integer("--src");
    p.dst = a.integer("--dst");
  }
  if (spec.family == workloads::Family::Pair) {
    p.pair = a.str("--pair").empty() ? std::vector<int>{} : parse_list(a.str("--pair"), devices);
    p.mode = a.str("--mode");
  }
  if (spec.rooted) p.root = a.integer("--root");
  if (spec.family == workloads::Family::Pipeline) {
    plan_pipeline_options(a, p);
  } else {
    p.sizes = sizes(o);
  }
  p.seed = o.seed;
  // Collectives move 4-byte floats: sizes rounded down as nccl-tests rounds them.
  p.sizes = collective_sizes(o.workload, p.sizes,
                             p.gpus.empty() ? static_cast<std::size_t>(devices) : p.gpus.size());
  Plan plan;
  plan.configs = plan_configs(p);
  plan.timing = o.timing.empty() ? default_timing(o.workload) : parse_timing(o.timing);
  if (plan.timing == Timing::Pipelined && spec.family == workloads::Family::Pipeline) {
    throw UsageError(
        "--timing pipelined: a pipeline step is timed per-op (or per-iteration), with its timeline");
  }
  plan.hash = plan_hash(plan_description(plan.configs, plan_settings(o, plan.timing)));
  return plan;
}

/// The simulator the estimate runs: --topology (else `fallback`, this machine's captured `nvidia-smi topo
/// -m`),
/// --params (else the fitted set for its GPUs, as `commsim simulate` chooses), and the NCCL knobs of this
/// environment that commsim models.
struct EstimateMachine {
  models::ModelParams params;
  std::unique_ptr<models::TransferModel> model;
  topo::Topology topology;
  std::unique_ptr<sim::Runtime> runtime;
  std::string basis;  ///< what the estimate rests on, in one line
};

std::unique_ptr<EstimateMachine> estimate_machine(const Options& o, const std::string& fallback) {
  const std::string path = o.topology.empty() ? fallback : o.topology;
  if (path.empty()) {
    throw UsageError(
        "no topology to estimate on: give --topology FILE, the machine the plan will run on (e.g. "
        "topologies/library/real/h200x4.topo)");
  }
  auto m = std::make_unique<EstimateMachine>();
  topo::Diagnostics diag;
  m->topology = topo::load_topology(path, {}, diag);
  std::string params_note;
  // "h200 (models/params/h200.toml; fitted: ...)": the name and file, not where it was fitted.
  auto short_provenance = [](std::string p) {
    const auto cut = p.find(';');
    return cut == std::string::npos ? p : p.substr(0, cut) + ")";
  };
  if (!o.params.empty()) {
    m->params = models::ModelParams::load(o.params);
    params_note = "parameters " + short_provenance(m->params.provenance()) + " from --params";
  } else {
    std::string gpu = m->topology.gpus.empty() ? "" : m->topology.gpus.front().model;
    for (const auto& g : m->topology.gpus) {
      if (g.model != gpu) gpu.clear();
    }
    const models::ModelParams* fitted = models::ModelParams::fitted_for_gpu(gpu);
    m->params = fitted ? *fitted : models::ModelParams::defaults();
    params_note = "parameters " + short_provenance(m->params.provenance()) +
                  (fitted ? ", the fitted set for " + gpu : ", unfitted defaults");
  }
  // The NCCL knobs this process runs with, where commsim models them.
  std::string known = "," + models::NcclEnv::known_keys() + ",";
  known.erase(std::remove(known.begin(), known.end(), ' '), known.end());
  std::vector<std::string> knobs;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (kv.rfind("NCCL_", 0) != 0 || eq == std::string::npos) continue;
    if (known.find("," + kv.substr(0, eq) + ",") != std::string::npos) knobs.push_back(kv);
  }
  m->model = models::make_transfer_model("nccl", m->params, models::NcclEnv::parse(knobs));
  m->runtime = std::make_unique<sim::Runtime>(m->topology, *m->model);
  m->basis = "commsim's simulator on " + path + ", " + params_note;
  for (const auto& k : knobs) m->basis += ", " + k;
  return m;
}

PlanShape plan_shape(const Options& o, const Plan& plan, int gpus) {
  PlanShape s;
  s.reps = o.reps;
  s.warmup = o.warmup;
  s.iterations = o.iterations;
  s.timed_alone = plan.timing != Timing::Pipelined;
  s.thread_per_gpu = o.launch != "single-thread";
  s.drift_seconds = o.drift_seconds;
  s.thermal_timeout_s = o.thermal_target_c > 0 ? o.thermal_timeout_s : 0;
  s.gpus = gpus;
  return s;
}

nlohmann::json estimate_json(const PlanEstimate& e, const std::string& basis) {
  return {{"total_s", e.total_s},
          {"low_s", e.low_s},
          {"high_s", e.high_s},
          {"startup_s", e.startup_s},
          {"communicators", e.communicators},
          {"communicators_s", e.communicators_s},
          {"thermal_max_s", e.thermal_max_s},
          {"drift_s", e.drift_s},
          {"operations_s", e.operations_s},
          {"per_run_s", e.per_run_s},
          {"teardown_s", e.teardown_s},
          {"basis", basis}};
}

/// The estimate and its parts, one per line, on `out`.
void print_estimate(std::FILE* out, const PlanEstimate& e, const std::string& basis, const std::string& runs,
                    const char* own_work = "the tool's own work around each run") {
  std::fprintf(out, "estimated wall time: %s, from %s\n", format_estimate(e).c_str(), basis.c_str());
  std::fprintf(out, "  %-50s %8.1f s\n", "start, GPU contexts", e.startup_s);
  if (e.communicators > 0)
    std::fprintf(out, "  %-50s %8.1f s\n",
                 ("communicators (" + std::to_string(e.communicators) + ")").c_str(), e.communicators_s);
  if (e.thermal_max_s > 0)
    std::fprintf(out, "  %-50s %8s   up to %.0f s, not in the total\n", "thermal warmup", "",
                 e.thermal_max_s);
  if (e.drift_s > 0) std::fprintf(out, "  %-50s %8.1f s\n", "clock drift windows (2)", e.drift_s);
  std::fprintf(out, "  %-50s %8.3f s\n", ("operations, simulated (" + runs + ")").c_str(), e.operations_s);
  std::fprintf(out, "  %-50s %8.3f s\n", own_work, e.per_run_s);
  if (e.teardown_s > 0) std::fprintf(out, "  %-50s %8.1f s\n", "results and teardown", e.teardown_s);
}

/// Phase 3, dry run: every repetition's configurations in the seeded order they run, as a table, CSV or
/// JSON, each with its simulated time, and the estimated wall time of the whole plan (with --topology).
void print_dry_run(const Options& o, const Plan& plan, int devices) {
  const auto& configs = plan.configs;
  std::optional<PlanEstimate> est;
  std::string basis;
  std::string why_not;
  try {
    if (configs.size() > kMaxEstimatedConfigs) {
      throw UsageError(std::to_string(configs.size()) + " configurations (the estimate simulates up to " +
                       std::to_string(kMaxEstimatedConfigs) + ")");
    }
    const auto machine = estimate_machine(o, "");
    est = estimate_plan(configs, plan_shape(o, plan, devices), *machine->runtime);
    basis = machine->basis;
  } catch (const UsageError& e) {
    // A topology given but unusable for this plan is an error; too large a plan is only not estimated.
    if (!o.topology.empty() && configs.size() <= kMaxEstimatedConfigs) throw;
    why_not = e.what();
  }
  auto gpu_text = [](const Config& c) {
    std::string g;
    for (int x : c.gpus) {
      if (!g.empty()) g += ',';  // (not "" + to_string: GCC 12 warns -Wrestrict on that once inlined here)
      g += std::to_string(x);
    }
    return g;
  };
  const std::string runs = std::to_string(configs.size() * static_cast<std::size_t>(std::max(o.reps, 0))) +
                           " runs x " + std::to_string(o.warmup + o.iterations) + " iterations";
  if (o.format == "json") {
    nlohmann::json order = nlohmann::json::array();
    for (int rep = 0; rep < o.reps; ++rep) {
      for (int i : run_order(configs.size(), o.seed, rep)) {
        const Config& c = configs[i];
        nlohmann::json row = {{"rep", rep},        {"config_id", c.id}, {"workload", c.workload},
                              {"src", c.src},      {"dst", c.dst},      {"gpus", c.gpus},
                              {"bytes", c.bytes},  {"mode", c.mode},    {"microbatches", c.microbatches},
                              {"chunks", c.chunks}};
        if (est) row["predicted_us"] = est->op_us[i];
        order.push_back(std::move(row));
      }
    }
    nlohmann::json doc = {{"schema", "commsim.measure_plan/1"}, {"workload", o.workload}, {"plan", plan.hash},
                          {"configurations", configs.size()},   {"reps", o.reps},         {"seed", o.seed},
                          {"order", std::move(order)}};
    doc["estimate"] = est ? estimate_json(*est, basis) : nlohmann::json{{"skipped", why_not}};
    std::fputs((doc.dump(2) + "\n").c_str(), stdout);
    return;
  }
  if (o.format == "csv") {
    CsvWriter csv;
    csv.header({"rep", "config_id", "workload", "src", "dst", "gpus", "bytes", "mode", "microbatches",
                "predicted_us"});
    for (int rep = 0; rep < o.reps; ++rep) {
      for (int i : run_order(configs.size(), o.seed, rep)) {
        const Config& c = configs[i];
        csv.field(rep)
            .field(c.id)
            .field(c.workload)
            .field(c.src)
            .field(c.dst)
            .field(gpu_text(c))
            .field(c.bytes);
        csv.field(c.mode).field(c.microbatches);
        if (est) {
          csv.field(est->op_us[i]);
        } else {
          csv.field("");
        }
        csv.end_row();
      }
    }
    std::fputs(csv.str().c_str(), stdout);
    // CSV carries no comment lines: the estimate goes to stderr.
    if (est) {
      print_estimate(stderr, *est, basis, runs);
    } else {
      std::fprintf(stderr, "commsim-measure: no estimate: %s\n", why_not.c_str());
    }
    return;
  }
  std::printf("%4s %9s %4s %4s %12s %12s  %s\n", "rep", "config_id", "src", "dst", "bytes", "predicted_us",
              "gpus");
  for (int rep = 0; rep < o.reps; ++rep) {
    for (int i : run_order(configs.size(), o.seed, rep)) {
      const Config& c = configs[i];
      std::string predicted = "-";
      if (est) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.2f", est->op_us[i]);
        predicted = buf;
      }
      std::string g = gpu_text(c);
      if (!c.mode.empty()) g += " " + c.mode;
      if (c.microbatches > 0) g += " mb " + std::to_string(c.microbatches);
      std::printf("%4d %9d %4d %4d %12llu %12s  %s\n", rep, c.id, c.src, c.dst,
                  static_cast<unsigned long long>(c.bytes), predicted.c_str(), g.c_str());
    }
  }
  std::printf("%zu configurations x %d repetitions, seed %llu, plan %s\n", configs.size(), o.reps,
              static_cast<unsigned long long>(o.seed), plan.hash.c_str());
  if (est) {
    print_estimate(stdout, *est, basis, runs);
  } else {
    std::printf("no estimate: %s\n", why_not.c_str());
  }
}

/// The GPUs this process drives, by global index, and their CUDA devices (NVML indices are taken to be the
/// same).
struct OwnGpus {
  std::vector<int> cuda_of;   ///< CUDA device of every global GPU; -1 where another process drives it
  std::vector<int> own;       ///< the global indices this process drives
  std::vector<int> own_cuda;  ///< their CUDA devices
};

/// Phase 4, open devices: which GPUs are this process's (all of them, or the MPI rank's one).
OwnGpus own_gpus(const World& world, int devices) {
  OwnGpus g;
  g.cuda_of.assign(devices, -1);
  for (int i = 0; i < devices; ++i) {
    if (!world.mpi() || i == world.rank()) {
      g.cuda_of[i] = world.mpi() ? world.local_rank() : i;
      g.own.push_back(i);
      g.own_cuda.push_back(g.cuda_of[i]);
    }
  }
  return g;
}

/// NCCL's INFO log into --out, where the transport of every pair comes from (unless NCCL_DEBUG is set).
void enable_nccl_debug(const Options& o) {
  if (!o.nccl_debug || std::getenv("NCCL_DEBUG")) return;
  setenv("NCCL_DEBUG", "INFO", 0);
  setenv("NCCL_DEBUG_SUBSYS", "INIT,P2P,SHM,NET", 0);
  setenv("NCCL_DEBUG_FILE", (o.out + "/nccl_debug.%h.%p.log").c_str(), 0);
}

/// This process's GPUs (name, UUID, bus id, memory in bytes) and, from the first process on a host, that
/// host's topology as nvidia-smi prints it.
nlohmann::json describe_process(const World& world, const OwnGpus& g, const Nvml& nvml) {
  nlohmann::json mine = {{"gpus", nlohmann::json::array()}, {"host", world.host()}};
  for (std::size_t i = 0; i < g.own.size(); ++i) {
    cudaDeviceProp prop{};
    COMMSIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, g.own_cuda[i]));
    char bus[32];
    std::snprintf(bus, sizeof bus, "%08x:%02x:%02x.0", prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);
    mine["gpus"].push_back({{"index", g.own[i]},
                            {"host", world.host()},
                            {"cuda_device", g.own_cuda[i]},
                            {"name", prop.name},
                            {"uuid", nvml.uuid(g.own_cuda[i])},
                            {"pci_bus_id", bus},
                            {"sm", prop.major * 10 + prop.minor},
                            {"memory_bytes", prop.totalGlobalMem}});
  }
  // The topology of every host, from the first process on it.
  if (world.local_rank() == 0) {
    mine["topo"] = shell("nvidia-smi topo -m");
    mine["nvlink"] = shell("nvidia-smi nvlink -s");
  }
  return mine;
}

/// The NCCL_*, CUDA_VISIBLE_DEVICES, TORCH_* and NVSHMEM_* variables of this process's environment.
nlohmann::json nccl_environment() {
  nlohmann::json env = nlohmann::json::object();
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    if (kv.rfind("NCCL_", 0) == 0 || kv.rfind("CUDA_VISIBLE_DEVICES", 0) == 0 || kv.rfind("TORCH_", 0) == 0 ||
        kv.rfind("NVSHMEM_", 0) == 0) {
      env[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
    }
  }
  return env;
}

/// The command line as one string, and the time now as ISO 8601 UTC.
std::string command_line(int argc, char** argv) {
  std::string cmdline;
  for (int i = 0; i < argc; ++i) {
    cmdline += i ? " " : "";
    cmdline += std::string(argv[i]);
  }
  return cmdline;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return date;
}

/// The run's settings as metadata: tool, workload, launch, timing, buffers, seed and iteration counts.
nlohmann::json settings_metadata(const Options& o, const World& world, Timing timing) {
  return {{"schema", "commsim.measure_meta/2"},  // results.json: commsim.results/2 (validation/schema/)
          {"tool", "commsim-measure"},
          {"workload", o.workload},
          {"host", world.host()},
          {"launch", o.launch},
          {"timing", timing_name(timing)},
          {"buffers", o.buffers},
          {"worker_threads", o.worker_threads},
          {"nvlink_centric_sched", o.nvlink_centric_sched},
          {"rotate_buffers", o.rotate_buffers},
          {"select_device", o.select_device},
          {"processes", world.size()},
          {"seed", o.seed},
          {"reps", o.reps},
          {"warmup", o.warmup},
          {"iterations", o.iterations}};
}

/// Phase 5, metadata first, so that a crash later still leaves the machine's description: every process's
/// GPUs and hosts, versions, environment and settings; the writer (`store`, rank 0) writes metadata.json and
/// every host's topo and nvlink files.
nlohmann::json write_metadata(const Options& o, const World& world, const OwnGpus& g, const Plan& plan,
                              ResultStore* store, int argc, char** argv) {
  const Timing timing = plan.timing;
  int driver = 0, runtime = 0, nccl = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  ncclGetVersion(&nccl);
  Nvml nvml;
  const std::string cmdline = command_line(argc, argv);
  const std::string date = utc_now();
  const nlohmann::json mine = describe_process(world, g, nvml);
  nlohmann::json gpus = nlohmann::json::array(), hosts = nlohmann::json::array();
  std::vector<nlohmann::json> per_process;
  for (const std::string& p : world.gather(mine.dump())) per_process.push_back(nlohmann::json::parse(p));
  for (const auto& pp : per_process) {
    for (const auto& gpu : pp["gpus"]) gpus.push_back(gpu);
    if (pp.contains("topo")) hosts.push_back(pp["host"]);
  }
  nlohmann::json meta = settings_metadata(o, world, timing);
  meta["hosts"] = hosts;
  meta["date"] = date;
  meta["command_line"] = cmdline;
  meta["gpus"] = gpus;
  meta["nccl_env"] = nccl_environment();
  meta["driver_version"] = nvml.driver_version();
  meta["cuda_driver_api"] = driver;
  meta["cuda_runtime"] = runtime;
  meta["nccl_version"] = nccl;
  meta["nvml"] = nvml.available() ? "available" : nvml.why_unavailable();
  std::string topo;  // the writer's host's topology
  for (const auto& pp : per_process) {
    if (pp.contains("topo") && pp["host"] == world.host()) topo = pp["topo"].get<std::string>();
  }
  meta["plan"] = plan.hash;
  meta["machine"] = machine_hash(gpus, topo);
  // A resumed run on other GPUs stops here, before its files replace the first run's.
  if (store) store->set_machine(meta["machine"].get<std::string>());
  if (!nvml.available() && world.local_rank() == 0)
    std::cerr << "commsim-measure: warning: NVML unavailable on " << world.host() << " ("
              << nvml.why_unavailable() << "); no clock or temperature log\n";
  if (store) {
    for (const auto& pp : per_process) {
      if (!pp.contains("topo")) continue;
      // topo.txt is the writer's host, verbatim for `commsim --topology`; other hosts get their own files.
      const std::string suffix = pp["host"] == world.host() ? "" : "." + pp["host"].get<std::string>();
      store->write("topo" + suffix + ".txt", pp["topo"].get<std::string>());
      store->write("nvlink" + suffix + ".txt", pp["nvlink"].get<std::string>());
    }
    store->write("metadata.json", meta.dump(2) + "\n");
  }
  return meta;
}

/// Phase 6, thermal warmup: spin kernels on this process's GPUs until every process's GPUs reach
/// --thermal-warmup degrees C, or --thermal-timeout seconds pass.
void thermal_warmup(const Options& o, const World& world, const Nvml& nvml,
                    const std::vector<int>& own_cuda) {
  if (o.thermal_target_c <= 0 || !nvml.available()) return;
  std::cerr << "commsim-measure: thermal warmup to " << o.thermal_target_c << " C (at most "
            << o.thermal_timeout_s << " s)\n";
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(o.thermal_timeout_s);
  while (std::chrono::steady_clock::now() < until) {
    bool warm = true;
    for (int d : own_cuda) {
      COMMSIM_CUDA_CHECK(cudaSetDevice(d));
      launch_spin(nullptr, 200'000'000, 1024);
      GpuSample s;
      if (nvml.sample(d, s) && s.temperature_c < o.thermal_target_c) warm = false;
    }
    for (int d : own_cuda) {
      COMMSIM_CUDA_CHECK(cudaSetDevice(d));
      COMMSIM_CUDA_CHECK(cudaDeviceSynchronize());
    }
    if (world.min(warm ? 1 : 0) == 1) break;  // every process warm
  }
}

/// The Runner's settings from the flags; buffers hold the largest configuration (a pipeline's two receive
/// buffers: twice its activation bytes).
RunnerOptions runner_options(const Options& o, const Plan& plan) {
  RunnerOptions ro;
  ro.warmup = o.warmup;
  ro.iterations = o.iterations;
  ro.timeout_s = o.timeout_s;
  ro.single_thread = o.launch == "single-thread";
  ro.timing = plan.timing;
  ro.nccl_mem_alloc = o.buffers == "ncclmemalloc";
  ro.persistent_threads = o.worker_threads == "persistent";
  ro.nvlink_centric_sched = o.nvlink_centric_sched == "on";
  ro.rotate_buffers = o.rotate_buffers == "on";
  ro.select_device_per_call = o.select_device == "per-call";
  const MeasureWorkload& w = measure_workload(o.workload);
  for (const Config& c : plan.configs)
    ro.max_bytes = std::max<std::uint64_t>(ro.max_bytes, w.buffer_bytes ? w.buffer_bytes(c) : c.bytes);
  return ro;
}

/// A process-level watchdog for hangs inside NCCL calls that the per-repetition watchdog cannot interrupt:
/// after 3 x --timeout seconds busy in one configuration it exits with status 5. Results are already flushed,
/// so exiting loses at most the configuration in flight. Runs until `finished`.
std::thread start_hang_guard(const Options& o, const std::atomic<std::int64_t>& busy_since,
                             const std::atomic<bool>& finished) {
  return std::thread([&o, &busy_since, &finished] {
    while (!finished) {
      const std::int64_t t = busy_since.load();
      const std::int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
      if (t > 0 && static_cast<double>(now - t) / 1e9 > 3 * o.timeout_s) {
        std::fprintf(stderr,
                     "commsim-measure: hung for %.0f s in one configuration; results so far are in %s (use "
                     "--resume)\n",
                     3 * o.timeout_s, o.out.c_str());
        std::_Exit(5);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
}

/// Phase 7, measure: every repetition of every configuration, each repetition in its own seeded order; the
/// writer (`store`) appends every sample. Returns the number of failed repetitions.
int measure_repetitions(const Options& o, const World& world, const std::vector<Config>& configs,
                        Runner& runner, ResultStore* store) {
  std::atomic<std::int64_t> busy_since{0};
  std::atomic<bool> finished{false};
  std::thread guard = start_hang_guard(o, busy_since, finished);
  std::optional<Progress> progress;
  if (store) progress.emplace(configs.size() * static_cast<std::size_t>(o.reps));
  int failures = 0;
  for (int rep = 0; rep < o.reps; ++rep) {
    for (int i : run_order(configs.size(), o.seed, rep)) {
      const Config& c = configs[i];
      // --resume: the writer knows what is done; every process skips the same repetitions.
      int skip = store && store->done(c.id, rep) ? 1 : 0;
      world.bcast(&skip, sizeof skip, 0);
      if (!skip) {
        busy_since = std::chrono::steady_clock::now().time_since_epoch().count();
        const Sample s = runner.run(c, rep);
        busy_since = 0;
        if (s.failed) {
          ++failures;
          if (store)
            std::cerr << "\ncommsim-measure: " << c.tag() << " rep " << rep << " failed: " << s.error << "\n";
        }
        if (store) store->append(c, s);
      }
      if (store) progress->step(c.tag());
    }
  }
  finished = true;
  guard.join();
  return failures;
}

/// Phase 8, results (the writer): the transports NCCL chose, from its INFO log, into the metadata; then
/// metadata.json, results.json, results.csv and samples.csv.
void write_results(const Options& o, nlohmann::json& meta, const ResultStore& store,
                   const std::vector<Config>& configs, int failures) {
  nlohmann::json transports = nlohmann::json::array();
  std::string debug;
  for (const auto& entry : std::filesystem::directory_iterator(o.out)) {
    if (entry.path().filename().string().rfind("nccl_debug.", 0) == 0)
      debug += read_file(entry.path().string());
  }
  for (const auto& [a, b, t] : parse_nccl_transports(debug))
    transports.push_back({{"src", a}, {"dst", b}, {"transport", t}});
  meta["nccl_transports"] = transports;
  store.write("metadata.json", meta.dump(2) + "\n");
  store.finalize(configs, meta);
  std::fprintf(stderr,
               "commsim-measure: %zu configurations x %d repetitions done (%d failed); results in %s\n",
               configs.size(), o.reps, failures, o.out.c_str());
}

/// The files commsim-measure writes into --out (nccl_debug.*.log besides, named by host and process).
const std::vector<std::string> kOutputFiles{"results.jsonl", "results.json", "results.csv",
                                            "samples.csv",   "exec_log.csv", "nvml.csv",
                                            "metadata.json", "topo.txt",     "nvlink.txt"};

/// Refuses, before any work, an --out whose files would overwrite an input (--counts).
void guard_measure_paths(const Options& o) {
  OutputGuard guard;
  guard.input("--counts", o.args.str("--counts"));
  guard.output_in("--out", o.out, kOutputFiles);
  guard.check();
}

/// What --resume found, on stderr: the plan, the repetitions kept, duplicates ignored, a torn last line
/// dropped (`dry_run`: that would be dropped; nothing is changed).
void report_resume(const ResumeScan& scan, const Plan& plan, const Options& o, bool dry_run) {
  const std::size_t total = plan.configs.size() * static_cast<std::size_t>(std::max(o.reps, 0));
  if (!scan.exists) {
    std::fprintf(stderr, "commsim-measure: --resume: no %s yet; plan %s starts from scratch\n",
                 scan.file.c_str(), plan.hash.c_str());
    return;
  }
  std::fprintf(stderr, "commsim-measure: --resume: %s holds %zu repetition(s) of plan %s (%zu planned)\n",
               scan.file.c_str(), scan.records, plan.hash.c_str(), total);
  if (scan.duplicates > 0) {
    std::fprintf(stderr,
                 "commsim-measure: --resume: %s:%d: %zu duplicate record(s) of a repetition already recorded "
                 "ignored (each counts once)\n",
                 scan.file.c_str(), scan.first_duplicate_line, scan.duplicates);
  }
  if (scan.torn_line > 0) {
    std::fprintf(
        stderr,
        "commsim-measure: --resume: %s:%d: %s the torn last line (%ju bytes, cut short by an interrupted "
        "run); its repetition runs again\n",
        scan.file.c_str(), scan.torn_line, dry_run ? "would drop" : "dropped", scan.torn_bytes);
  }
}

/// When this process started (steady clock): the wall-clock phases count from it.
const std::chrono::steady_clock::time_point kProcessStart = std::chrono::steady_clock::now();

/// The run's phases as seconds since the process started, for metadata.json ("wall_clock"): what the
/// estimate is checked against.
class WallClock {
 public:
  void mark(const std::string& phase) {
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - kProcessStart).count();
    phases_.push_back({{"phase", phase}, {"end_s", t}});
  }
  nlohmann::json json() const { return {{"since", "process start"}, {"phases", phases_}}; }

 private:
  nlohmann::json phases_ = nlohmann::json::array();
};

/// A run's own estimate, on stderr and for metadata.json: on --topology, else the topology captured into
/// --out; an estimate that cannot be made is a note, never a failed measurement.
nlohmann::json run_estimate(const Options& o, const Plan& plan, int gpus) {
  try {
    if (plan.configs.size() > kMaxEstimatedConfigs) throw UsageError("too many configurations to simulate");
    const auto machine = estimate_machine(o, o.out + "/topo.txt");
    const PlanEstimate e = estimate_plan(plan.configs, plan_shape(o, plan, gpus), *machine->runtime);
    std::fprintf(stderr, "commsim-measure: estimated wall time %s (%s)\n", format_estimate(e).c_str(),
                 machine->basis.c_str());
    return estimate_json(e, machine->basis);
  } catch (const Error& e) {
    std::fprintf(stderr, "commsim-measure: no wall-time estimate: %s\n", e.what());
    return {{"skipped", e.what()}};
  }
}

/// `commsim-measure <workload>`: plan, and unless --dry-run, measure on this process's GPUs and (rank 0)
/// write the results. Returns the exit status (6 when some repetitions failed).
int run(const Options& o, const World& world, int argc, char** argv) {
  guard_measure_paths(o);
  const int devices = count_devices(o, world);
  const Plan plan = plan_run(o, devices);
  if (o.dry_run) {
    if (world.rank() == 0) print_dry_run(o, plan, devices);
    if (o.resume && !o.out.empty())
      report_resume(scan_results(o.out, plan.hash, plan.configs.size()), plan, o, true);
    return 0;
  }
  if (o.out.empty()) throw UsageError("--out DIR is required (results, samples, logs and metadata go there)");
  const OwnGpus gpus = own_gpus(world, devices);
  // Rank 0 writes every output file; the other processes send it what they measure.
  std::optional<ResultStore> store;
  if (world.rank() == 0) {
    store.emplace(o.out, o.resume, plan.hash, plan.configs.size());
    if (o.resume) report_resume(store->resumed(), plan, o, false);
  }
  ResultStore* writer = store ? &*store : nullptr;
  enable_nccl_debug(o);
  WallClock clock;
  nlohmann::json meta = write_metadata(o, world, gpus, plan, writer, argc, argv);
  clock.mark("metadata");
  if (writer) meta["estimate"] = run_estimate(o, plan, static_cast<int>(gpus.own.size()));
  Nvml nvml;
  // One NVML log per process (the MPI launch: nvml.rank<R>.csv, on that rank's host under --out).
  NvmlLogger logger(
      nvml, gpus.own_cuda, gpus.own,
      o.out + (world.mpi() ? "/nvml.rank" + std::to_string(world.rank()) + ".csv" : "/nvml.csv"),
      o.nvml_interval_ms);
  thermal_warmup(o, world, nvml, gpus.own_cuda);
  clock.mark("thermal_warmup");
  if (o.drift_seconds > 0)
    meta["clock_drift_start"] = drift_check(world, gpus.own, gpus.own_cuda, o.drift_seconds);
  clock.mark("drift_start");
  Runner runner(world, gpus.cuda_of, runner_options(o, plan));
  clock.mark("runner");
  const int failures = measure_repetitions(o, world, plan.configs, runner, writer);
  clock.mark("repetitions");
  if (o.drift_seconds > 0)
    meta["clock_drift_end"] = drift_check(world, gpus.own, gpus.own_cuda, o.drift_seconds);
  clock.mark("drift_end");
  logger.stop();
  meta["nvml_summary"] = gather_arrays(world, logger.summary());
  meta["wall_clock"] = clock.json();
  if (writer) write_results(o, meta, *writer, plan.configs, failures);
  return failures > 0 ? static_cast<int>(ExitCode::kSomeFailed) : 0;
}

/// `commsim-measure weight-sync`: one-shot phases, not a size sweep; results.json and results.csv in --out.
int run_weight_sync_command(const WeightSyncOptions& w, const std::string& out, int argc, char** argv) {
  if (out.empty()) throw UsageError("--out DIR is required");
  commsim::workloads::model_spec(w.model);  // an unknown name fails before any GPU work
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) throw UsageError("no GPU available");
  for (int g : w.to) {
    if (g < 0 || g >= devices || g == w.from) throw UsageError("--to GPUs must exist and differ from --from");
  }
  if (w.from < 0 || w.from >= devices) throw UsageError("--from GPU does not exist");
  if (w.to.empty()) throw UsageError("--to needs at least one GPU");
  create_output_directory("--out", out);
  nlohmann::json raw = run_weight_sync(w);
  std::string cmdline;
  for (int i = 0; i < argc; ++i) {
    if (i) cmdline += " ";
    cmdline += argv[i];
  }
  int nccl = 0;
  ncclGetVersion(&nccl);
  raw["command_line"] = cmdline;
  raw["nccl_version"] = nccl;
  // One row per timing in microseconds, as `commsim simulate weight-sync` writes them (schema
  // commsim.results/2).
  const nlohmann::json r = weight_sync_document(raw);
  write_file_atomic(out + "/results.json", r.dump(2) + "\n");
  write_file_atomic(out + "/results.csv", weight_sync_csv(r));
  std::fprintf(stderr, "commsim-measure: weight-sync %s of %s done; results in %s\n", w.method.c_str(),
               w.model.c_str(), out.c_str());
  return 0;
}

/// The flags every measured workload takes (a workload's own come from the registry), bound to `o`.
void add_common_flags(CLI::App* sub, Options& o) {
  sub->add_option("--gpus", o.gpus, "GPUs in rank order: 0-3, 0,2, all (a list, as in commsim)");
  sub->add_option("-g,--gpu-count", o.gpu_count,
                  "Use GPUs 0..N-1 (as nccl-tests -g N); --gpus picks among them. With --dry-run:\n"
                  "plan for N GPUs without one");
  sub->add_option("-b,--min-bytes", o.min_bytes, "Smallest size: 8, 1K, 128M (nccl-tests), 1KiB, 1MB")
      ->capture_default_str();
  sub->add_option("-e,--max-bytes", o.max_bytes, "Largest size, written as --min-bytes")
      ->capture_default_str();
  sub->add_option("-f,--factor", o.factor, "Size multiplier between steps")->capture_default_str();
  sub->add_option("--reps", o.reps, "Repetitions of every configuration, each in a new random order")
      ->capture_default_str();
  sub->add_option("-w,--warmup", o.warmup, "Untimed iterations per repetition (nccl-tests -w)")
      ->capture_default_str();
  sub->add_option("-n,--iterations,--iters", o.iterations,
                  "Timed iterations per repetition (nccl-tests -n; --iters is the old name)")
      ->capture_default_str();
  sub->add_option("--seed", o.seed, "Seed of the configuration order")->capture_default_str();
  sub->add_option("--out", o.out, "Output directory");
  sub->add_flag("--resume", o.resume, "Continue the run in --out, skipping completed repetitions");
  sub->add_flag("--dry-run", o.dry_run, "Print the planned configurations in order; touch no GPU");
  sub->add_option("--format", o.format, "Dry-run format")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  sub->add_option("--topology", o.topology,
                  "The machine the wall-time estimate simulates (nvidia-smi topo -m output or a what-if\n"
                  ".toml; default: this machine's, as captured into --out)");
  sub->add_option("--params", o.params,
                  "The estimate's parameter set (default: the fitted set for the topology's GPUs)");
  sub->add_option("--timeout", o.timeout_s, "Watchdog time per repetition (s, or with a unit: 90s, 2000ms)")
      ->transform(workloads::time_in("s"))
      ->capture_default_str();
  sub->add_option("--launch", o.launch,
                  "thread-per-gpu; single-thread as nccl-tests -g N; mpi: one rank per GPU under\n"
                  "mpirun or srun (GPU index = MPI rank), for measurements across machines")
      ->check(CLI::IsMember({"thread-per-gpu", "single-thread", "mpi"}))
      ->capture_default_str();
  sub->add_option(
         "--timing", o.timing,
         "pipelined: --iterations back-to-back operations timed as one by the host clock, as nccl-tests\n"
         "times them (default; what commsim's time_us predicts); per-op: each operation alone, ranks\n"
         "aligned, launch to completion (nccl-tests -z 3; the default for pipeline steps);\n"
         "per-iteration: a CUDA event between back-to-back operations (nccl-tests -I 1)")
      ->check(CLI::IsMember({"pipelined", "per-op", "per-iteration"}));
  sub->add_option("--worker-threads", o.worker_threads,
                  "thread-per-gpu launch: persistent (the same thread per GPU for the whole run, as\n"
                  "nccl-tests) or per-repetition (new threads for every repetition)")
      ->check(CLI::IsMember({"persistent", "per-repetition"}))
      ->capture_default_str();
  sub->add_option("--buffers", o.buffers,
                  "ncclmemalloc: buffers from ncclMemAlloc, as nccl-tests; cudamalloc: plain cudaMalloc")
      ->check(CLI::IsMember({"ncclmemalloc", "cudamalloc"}))
      ->capture_default_str();
  sub->add_option("--nvlink-centric-sched", o.nvlink_centric_sched,
                  "on: communicators with NCCL's nvlinkCentricSched = 1, as nccl-tests (NCCL >= 2.28)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  sub->add_option(
         "--rotate-buffers", o.rotate_buffers,
         "on: iteration i uses the buffers SIZE x (i mod (largest/SIZE)) bytes in, as nccl-tests shifts\n"
         "them to avoid cache effects; off: every iteration the same bytes (L2-resident up to ~50 MB)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  sub->add_option(
         "--select-device", o.select_device,
         "single-thread launch: when-needed (cudaSetDevice only before events and kernels, as nccl-tests\n"
         "-g N never calls it) or per-call (before every GPU's NCCL calls, as before issue 18)")
      ->check(CLI::IsMember({"when-needed", "per-call"}))
      ->capture_default_str();
  sub->add_option("--drift-seconds", o.drift_seconds,
                  "GPU-vs-CPU clock drift window at start and end (s, or with a unit; 0: skip)")
      ->transform(workloads::time_in("s"))
      ->capture_default_str();
  sub->add_option("--thermal-warmup", o.thermal_target_c,
                  "Load the GPUs until they reach this temperature (C)");
  sub->add_option("--thermal-timeout", o.thermal_timeout_s,
                  "Give up the thermal warmup after this time (s, or with a unit)")
      ->transform(workloads::time_in("s"))
      ->capture_default_str();
  sub->add_option("--nvml-interval-ms", o.nvml_interval_ms, "NVML sampling interval (ms, or with a unit: 1s)")
      ->transform(workloads::time_in("ms"))
      ->capture_default_str();
}

/// `commsim-measure weight-sync`'s flags, as given (--to and --bucket-bytes are parsed after CLI11).
struct WeightSyncFlags {
  CLI::App* sub = nullptr;
  WeightSyncOptions options;
  std::string out, to, bucket;
  bool dry_run = false;
  Options estimate;  ///< --topology and --params of the dry run's estimate
};

/// weight-sync is its own subcommand (one-shot phases, not a size sweep; the registry does not mark it
/// measured).
void add_weight_sync_command(CLI::App& app, WeightSyncFlags& w) {
  w.sub = app.add_subcommand("weight-sync",
                             "Push a model's weights from a trainer GPU to rollout GPUs by NCCL\n"
                             "broadcast or a copy-engine P2P engine, timing every phase");
  w.sub->add_option("--model", w.options.model, "Model spec (commsim model list)")->required();
  w.sub->add_option("--from", w.options.from, "Trainer GPU")->capture_default_str();
  w.sub->add_option("--to", w.to, "Rollout GPUs, e.g. 1-3")->required();
  w.sub->add_option("--method", w.options.method, "broadcast or p2p-engine")
      ->check(CLI::IsMember({"broadcast", "p2p-engine"}))
      ->required();
  w.sub->add_option("--streams", w.options.streams, "p2p-engine: copy streams per rollout GPU")
      ->capture_default_str();
  w.sub->add_option("--reps", w.options.reps, "Timed repetitions after one warmup")->capture_default_str();
  w.sub->add_option("--bucket-bytes", w.bucket,
                    "broadcast: coalesce tensors into buckets of this size (with a unit)");
  w.sub->add_option("--out", w.out, "Output directory (required unless --dry-run)");
  w.sub->add_flag("--dry-run", w.dry_run, "Print the push and its estimated wall time; touch no GPU");
  w.sub->add_option("--topology", w.estimate.topology,
                    "The machine the dry run's estimate simulates (nvidia-smi topo -m output or a .toml)");
  w.sub->add_option("--params", w.estimate.params,
                    "The estimate's parameter set (default: the fitted set for the topology's GPUs)");
}

/// `commsim-measure weight-sync --dry-run`: what one push moves and how long the run should take.
int weight_sync_dry_run(const WeightSyncFlags& w) {
  const workloads::ModelSpec& spec = workloads::model_spec(w.options.model);
  const auto pieces = sim::tensor_pieces(spec, w.options.method == "broadcast" ? w.options.bucket_bytes : 0);
  std::uint64_t bytes = 0;
  for (auto b : pieces) bytes += b;
  std::printf(
      "weight-sync %s of %s: %zu %s of %llu bytes in all, from GPU %d to %zu GPU(s), %d warmup + %d "
      "timed pushes\n",
      w.options.method.c_str(), w.options.model.c_str(), pieces.size(),
      w.options.method == "broadcast" ? "broadcasts" : "tensors per rollout GPU",
      static_cast<unsigned long long>(bytes), w.options.from, w.options.to.size(), 1, w.options.reps);
  try {
    const auto machine = estimate_machine(w.estimate, "");
    WeightSyncShape shape;
    shape.model = w.options.model;
    shape.from = w.options.from;
    shape.to = w.options.to;
    shape.method = w.options.method;
    shape.streams = w.options.streams;
    shape.bucket_bytes = w.options.bucket_bytes;
    shape.reps = w.options.reps;
    const PlanEstimate e = estimate_weight_sync(shape, *machine->runtime);
    std::printf("simulated push: %.3f ms\n", e.op_us[0] / 1e3);
    print_estimate(stdout, e, machine->basis, std::to_string(w.options.reps + 1) + " pushes",
                   "model copies allocated, filled, freed");
  } catch (const UsageError& e) {
    if (!w.estimate.topology.empty()) throw;
    std::printf("no estimate: %s\n", e.what());
  }
  return 0;
}

/// Runs a parsed `weight-sync` command: --to and --bucket-bytes checked, then the push.
int run_weight_sync_flags(WeightSyncFlags& w, int argc, char** argv) {
  w.options.to = parse_list(w.to, 1 << 20);
  if (!w.bucket.empty()) {
    w.options.bucket_bytes = parse_size_flag("--bucket-bytes", w.bucket);
    if (w.options.method != "broadcast") throw UsageError("--bucket-bytes applies to --method broadcast");
  }
  if (w.dry_run) return weight_sync_dry_run(w);
  return run_weight_sync_command(w.options, w.out, argc, argv);
}

/// `commsim-measure --list-workloads` (alone; not in --help): the workloads commsim-measure issues (one file
/// each in workloads/measure/), one per line, for the test that compares them with the registry.
bool list_workloads(int argc, char** argv) {
  if (argc != 2 || std::string(argv[1]) != "--list-workloads") return false;
  for (const MeasureWorkload* w : measure_workloads()) std::cout << w->name << "\n";
  return true;
}

}  // namespace
}  // namespace commsim::measure

int main(int argc, char** argv) {
  using commsim::measure::Options;
  namespace workloads = commsim::workloads;
  Options o;
  std::optional<commsim::measure::World> world;
  CLI::App app{
      "commsim-measure runs commsim's workloads on this machine's GPUs with NCCL, with warmup, a seeded\n"
      "random order, repetitions and per-iteration CUDA-event timing, and writes the simulator's result\n"
      "schema plus raw samples, an execution log, clock/temperature logs and full metadata.",
      "commsim-measure"};
  app.footer(commsim::measure::kFooter);
  app.set_version_flag("--version", std::string("commsim-measure ") + COMMSIM_VERSION);
  app.require_subcommand(1);
  // One subcommand per measured registry workload: the common flags, then the workload's own.
  std::map<std::string, workloads::WorkloadArgs> args_of;  // bound by CLI11: one per subcommand
  for (const workloads::WorkloadSpec* w : workloads::measured_workloads()) {
    CLI::App* sub = app.add_subcommand(w->name, "Measure " + w->name);
    commsim::measure::add_common_flags(sub, o);
    workloads::WorkloadArgs& args = args_of[w->name] =
        workloads::WorkloadArgs::defaults(*w, workloads::Side::Measure);
    workloads::add_workload_flags(sub, *w, workloads::Side::Measure, args);
    sub->callback([&o, &args, name = w->name] {
      o.workload = name;
      o.args = args;
    });
  }
  commsim::measure::WeightSyncFlags ws;
  commsim::measure::add_weight_sync_command(app, ws);
  try {
    commsim::measure::check_measure_workloads();  // a workload without its measure file is a build bug
    if (commsim::measure::list_workloads(argc, argv)) return 0;
    app.parse(argc, argv);
    if (ws.sub->parsed()) return commsim::measure::run_weight_sync_flags(ws, argc, argv);
    world.emplace(o.launch == "mpi" && !o.dry_run, &argc, &argv);
    return commsim::measure::run(o, *world, argc, argv);
  } catch (const CLI::ParseError& e) {
    const std::string hint = workloads::did_you_mean(app, argc, argv);
    if (hint.empty()) return app.exit(e) == 0 ? 0 : 2;
    std::cerr << "commsim-measure: " << hint << "\nRun with --help for more information.\n";
    return 2;
  } catch (const commsim::Error& e) {
    // Under MPI the other ranks may be waiting in a collective: the error ends them all.
    const std::string who = world && world->size() > 1 ? " (rank " + std::to_string(world->rank()) + ")" : "";
    std::cerr << "commsim-measure" << who << ": " << e.what() << "\n";
    if (world) world->abort(static_cast<int>(e.exit_code()));
    return static_cast<int>(e.exit_code());
  } catch (const std::exception& e) {
    std::cerr << "commsim-measure: internal error: " << e.what() << "\n";
    if (world) world->abort(1);
    return 1;
  }
}
