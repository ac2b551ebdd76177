// `commsim simulate <workload>`: size sweeps and schedules through the engine, as tables, CSV or JSON.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "commsim/core/error.hpp"
#include "commsim/core/text.hpp"
#include "commsim/models/hardware.hpp"
#include "commsim/models/model_spec.hpp"
#include "commsim/models/nccl_env.hpp"
#include "commsim/models/params.hpp"
#include "commsim/models/transfer.hpp"
#include "commsim/sim/runtime.hpp"
#include "commsim/sim/schedules.hpp"
#include "commsim/sim/workloads.hpp"
#include "commsim/topo/load.hpp"
#include "setup.hpp"

namespace commsim::cli {
namespace {

struct SimOptions {
  std::string topology;
  std::string gpu;
  std::string params;
  std::string model = "nccl";
  std::vector<std::string> nccl_env;
  std::string format = "table";
  std::string out;
  std::string trace;
  std::string min_bytes = "1B";
  std::string max_bytes = "1GiB";
  double factor = 2;
  int iterations = 3;
  int warmup = 1;
  // Workload specific.
  int src = -1;
  int dst = -1;
  std::string pairs;
  std::string gpus = "all";
  std::string pair;
  std::string mode;
  std::string launch = "auto";
  std::string framework = "nccl";
  int root = 0;
  std::string model_name;  ///< --model NAME (broadcast, weight-sync, grad-sync)
  std::string bucket_bytes;
  // pipeline
  int stages = 0;
  std::string microbatches;
  std::string activation_bytes;
  double fwd_us = 0;
  double bwd_us = 0;
  std::string schedule = "1f1b";
  int chunks = 0;
  // weight-sync
  std::string from;
  std::string to;
  std::string method;
  int streams = 4;
  // grad-sync baseline
  std::string baseline_topology;
  std::vector<std::string> baseline_nccl_env;
};

/// PyTorch's per-call overhead on every launch that issues communication (--framework torch for the
/// point-to-point workloads).
void apply_framework(sim::Program& p, sim::Framework f) {
  if (f != sim::Framework::Torch) return;
  for (sim::LaunchSpec& l : p.launches) {
    for (const sim::KernelSpec& k : l.kernels) {
      if (!k.ops.empty() || k.collective) {
        ++l.framework_calls;
        break;
      }
    }
  }
}

Picoseconds us_flag(const char* flag, double us) {
  if (!(us >= 0) || us > 1e9) throw UsageError(std::string(flag) + " must be between 0 and 1e9 microseconds");
  return static_cast<Picoseconds>(std::llround(us * 1e6));
}

/// Progress on a terminal: a bar with an ETA on stderr; nothing when stderr is not a terminal.
class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total), enabled_(total >= 200 && ::isatty(STDERR_FILENO)) {
    start_ = std::chrono::steady_clock::now();
  }
  void step() {
    ++done_;
    if (!enabled_ || (done_ % 25 != 0 && done_ != total_)) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double eta = elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_);
    const int width = 30;
    const int filled = static_cast<int>(width * done_ / total_);
    std::fprintf(stderr, "\r[%s%s] %zu/%zu runs, ETA %.0fs ", std::string(filled, '=').c_str(),
                 std::string(width - filled, ' ').c_str(), done_, total_, eta);
    if (done_ == total_) std::fprintf(stderr, "\n");
  }

 private:
  std::size_t total_;
  std::size_t done_ = 0;
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
};

/// Adds the prediction band beside every time column (time_us or time_ms: <column>_lo, <column>_hi), from
/// the row's size and the parameter set's [band], and says in the output which set and band were used.
double cell_number(const sim::ResultTable::Cell& c) {
  if (const auto* i = std::get_if<std::int64_t>(&c)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&c)) return *d;
  return 0;
}

void add_band(sim::ResultTable& table, const models::ModelParams& params, const std::string& note) {
  const auto bytes_col =
      std::find(table.columns.begin(), table.columns.end(), "bytes") - table.columns.begin();
  for (const char* name : {"time_us", "time_ms"}) {
    const auto it = std::find(table.columns.begin(), table.columns.end(), name);
    if (it == table.columns.end()) continue;
    const auto col = it - table.columns.begin();
    table.columns.insert(table.columns.begin() + col + 1,
                         {std::string(name) + "_lo", std::string(name) + "_hi"});
    if (static_cast<std::size_t>(col) < table.units.size()) {
      const std::string unit = table.units[static_cast<std::size_t>(col)];
      table.units.insert(table.units.begin() + col + 1, {unit, unit});
    }
    for (auto& row : table.rows) {
      const double t = cell_number(row[static_cast<std::size_t>(col)]);
      const std::uint64_t bytes =
          static_cast<std::size_t>(bytes_col) < row.size()
              ? static_cast<std::uint64_t>(cell_number(row[static_cast<std::size_t>(bytes_col)]))
              : models::kBandRegimeBytes;
      const models::Band b = models::band_of(params, bytes, t);
      row.insert(row.begin() + col + 1, {b.lo_us, b.hi_us});
    }
  }
  char band[200];
  std::snprintf(band, sizeof band, "band: -%.1f%%/+%.1f%% below 1 MiB, -%.1f%%/+%.1f%% from 1 MiB (%s)",
                100 * params.band.latency_below, 100 * params.band.latency_above,
                100 * params.band.bandwidth_below, 100 * params.band.bandwidth_above,
                params.fitted.empty() ? "datasheet band: no fitted set"
                                      : "from the fit's residuals, measured spread and standard errors");
  table.notes = {note, band};
  table.metadata["params_note"] = note;
  table.metadata["params_fitted"] = params.fitted;
  table.metadata["band"] = {{"latency_below", params.band.latency_below},
                            {"latency_above", params.band.latency_above},
                            {"bandwidth_below", params.band.bandwidth_below},
                            {"bandwidth_above", params.band.bandwidth_above},
                            {"regime_bytes", models::kBandRegimeBytes},
                            {"kind", params.fitted.empty() ? "datasheet" : "fitted"}};
}

/// Set by Ctrl-C (SIGINT); the runtime polls it between events. A second Ctrl-C kills at once.
std::atomic<bool> g_interrupted{false};
extern "C" void on_sigint(int) {
  g_interrupted.store(true);
  std::signal(SIGINT, SIG_DFL);
}

/// Ctrl-C ends the simulation cleanly, and, when stderr is a terminal, a long run reports where it stands
/// (simulated time, events, flows) about twice a second on one line of stderr.
class EngineProgress {
 public:
  explicit EngineProgress(sim::Runtime& runtime) {
    std::signal(SIGINT, on_sigint);
    sim::RunHooks hooks;
    hooks.cancel = &g_interrupted;
    if (::isatty(STDERR_FILENO)) {
      hooks.progress = [this](const sim::RunProgress& p) {
        printed_ = true;
        std::fprintf(stderr,
                     "\r\033[Ksimulating: %.3f ms simulated, %llu events, %llu flows (%zu moving), %.0f s",
                     static_cast<double>(p.now) / 1e9, static_cast<unsigned long long>(p.events),
                     static_cast<unsigned long long>(p.flows), p.active_flows, p.wall_seconds);
      };
    }
    runtime.set_hooks(std::move(hooks));
  }
  ~EngineProgress() {
    if (printed_) std::fprintf(stderr, "\r\033[K");
    std::signal(SIGINT, SIG_DFL);
  }
  EngineProgress(const EngineProgress&) = delete;
  EngineProgress& operator=(const EngineProgress&) = delete;

 private:
  bool printed_ = false;
};

void emit(const SimOptions& o, sim::ResultTable& table, const sim::Trace* trace) {
  std::string text;
  if (o.format == "csv") {
    text = table.to_csv();
  } else if (o.format == "json") {
    text = table.to_json().dump(2) + "\n";
  } else {
    text = table.to_table();
  }
  if (o.out.empty() || o.out == "-") {
    std::cout << text;
  } else {
    write_file_atomic(o.out, text);
  }
  if (trace) write_file_atomic(o.trace, trace->to_json().dump() + "\n");
}

/// On Ctrl-C (the runtime throws sim::Interrupted while g_interrupted is set), prints the rows of the runs
/// that finished, with how far the interrupted one got in the metadata; the exception then ends the command
/// (130).
class EmitOnInterrupt {
 public:
  EmitOnInterrupt(const SimOptions& o, sim::ResultTable& table, const std::uint64_t& events,
                  const std::uint64_t& flows)
      : o_(o), table_(table), events_(events), flows_(flows), uncaught_(std::uncaught_exceptions()) {}
  ~EmitOnInterrupt() {
    if (std::uncaught_exceptions() <= uncaught_ || !g_interrupted.load()) return;
    try {
      table_.metadata["engine_events"] = events_;
      table_.metadata["engine_flows"] = flows_;
      table_.metadata["interrupted"] = "interrupted by Ctrl-C; rows are the runs that finished";
      emit(o_, table_, nullptr);
    } catch (...) {  // the interruption is what gets reported
    }
  }
  EmitOnInterrupt(const EmitOnInterrupt&) = delete;
  EmitOnInterrupt& operator=(const EmitOnInterrupt&) = delete;

 private:
  const SimOptions& o_;
  sim::ResultTable& table_;
  const std::uint64_t& events_;
  const std::uint64_t& flows_;
  int uncaught_;
};

/// Engine work over every run of one command, reported in the output's metadata.
struct EngineCount {
  std::uint64_t events = 0;
  std::uint64_t flows = 0;
};

/// Runs a program exactly as built (its own warmup and iterations), with the trace if one is kept.
std::function<sim::RunResult(sim::Program)> run_raw(sim::Runtime& runtime, sim::Trace* trace,
                                                    EngineCount& count) {
  return [&runtime, trace, &count](sim::Program p) {
    sim::RunResult r = runtime.run(p, trace);
    count.events += r.events;
    count.flows += r.flows;
    if (trace) trace->set_offset(trace->offset() + r.iteration_end.back() + 10 * kPicosPerMicro);
    return r;
  };
}

void run_pipeline(const SimOptions& o, sim::ResultTable& table, int n,
                  const std::function<sim::RunResult(sim::Program)>& run) {
  const bool interleaved = o.schedule == "interleaved";
  if (!interleaved && o.chunks > 1)
    throw UsageError("--chunks " + std::to_string(o.chunks) + " needs --schedule interleaved");
  if (interleaved && o.chunks < 2) throw UsageError("--schedule interleaved needs --chunks V (at least 2)");
  std::vector<int> gpus;
  if (o.gpus != "all") {
    gpus = parse_gpu_list(o.gpus, n);
    if (o.stages > 0 && static_cast<int>(gpus.size()) != o.stages)
      throw UsageError("--stages " + std::to_string(o.stages) + " but --gpus lists " +
                       std::to_string(gpus.size()) + " GPUs");
  } else {
    if (o.stages < 2) throw UsageError("pipeline needs --stages P (at least 2) or --gpus LIST");
    if (o.stages > n) {
      throw UsageError("--stages " + std::to_string(o.stages) + " is more than the topology's " +
                       std::to_string(n) + " GPUs");
    }
    for (int i = 0; i < o.stages; ++i) gpus.push_back(i);
  }
  if (o.microbatches.empty()) throw UsageError("pipeline needs --microbatches M[,M...]");
  if (o.activation_bytes.empty()) throw UsageError("pipeline needs --activation-bytes SIZE[,SIZE...]");
  std::vector<int> mbs;
  for (const std::string& m : split_list(o.microbatches)) {
    char* end = nullptr;
    const long v = std::strtol(m.c_str(), &end, 10);
    if (end == m.c_str() || *end != '\0' || v < 1 || v > 100000)
      throw UsageError("--microbatches " + m + ": expected a whole number between 1 and 100000");
    mbs.push_back(static_cast<int>(v));
  }
  std::vector<std::uint64_t> acts;
  for (const std::string& a : split_list(o.activation_bytes))
    acts.push_back(parse_size_flag("--activation-bytes", a));
  std::vector<sim::ExchangeMode> modes;
  for (const std::string& m : split_list(o.mode.empty() ? "sequential,overlapped,batched" : o.mode))
    modes.push_back(sim::parse_exchange_mode(m));
  table.columns = {"bytes", "microbatches", "mode",       "framework", "time_us",
                   "stage", "gpu",          "compute_us", "comm_us",   "bubble_us"};
  table.units = {"B", "", "", "", "us", "", "", "us", "us", "us"};
  table.metadata["gpus"] = gpus;
  table.metadata["schedule"] = o.schedule;
  table.metadata["chunks"] = interleaved ? o.chunks : 1;
  table.metadata["fwd_us"] = o.fwd_us;
  table.metadata["bwd_us"] = o.bwd_us;
  Progress progress(acts.size() * mbs.size() * modes.size());
  for (std::uint64_t a : acts) {
    for (int m : mbs) {
      for (sim::ExchangeMode mode : modes) {
        sim::PipelineSpec spec;
        spec.gpus = gpus;
        spec.microbatches = m;
        spec.activation_bytes = a;
        spec.fwd = us_flag("--fwd-us", o.fwd_us);
        spec.bwd = us_flag("--bwd-us", o.bwd_us);
        spec.mode = mode;
        spec.framework = sim::parse_framework(o.framework);
        spec.chunks = interleaved ? o.chunks : 1;
        sim::Program p = sim::pipeline_program(spec);
        p.iterations = o.iterations;
        p.warmup = o.warmup;
        const sim::RunResult r = run(std::move(p));
        const double step = static_cast<double>(r.per_iteration) / 1e6;
        for (std::size_t st = 0; st < gpus.size(); ++st) {
          const auto it = r.busy.find(gpus[st]);
          const sim::GpuBusy b = it == r.busy.end() ? sim::GpuBusy{} : it->second;
          const double compute = static_cast<double>(b.compute) / 1e6 / o.iterations;
          const double comm = static_cast<double>(b.transfer) / 1e6 / o.iterations;
          table.rows.push_back({static_cast<std::int64_t>(a), std::int64_t{m},
                                std::string(sim::exchange_mode_name(mode)), o.framework, step,
                                static_cast<std::int64_t>(st), std::int64_t{gpus[st]}, compute, comm,
                                std::max(0.0, step - compute)});
        }
        progress.step();
      }
    }
  }
}

/// --launch: auto is one host thread for all GPUs (nccl-tests -g N) inside one machine, and one process per
/// GPU (mpirun -np N) across machines, where one thread cannot drive them all.
bool thread_per_gpu(const SimOptions& o, const topo::Topology& t, const std::vector<int>& gpus) {
  const std::size_t machines = sim::machine_count(t, gpus);
  if (o.launch == "single-thread" && machines > 1) {
    throw UsageError("--launch single-thread: one host thread cannot drive GPUs on " +
                     std::to_string(machines) +
                     " machines; use --launch thread-per-gpu (one process per GPU, as under mpirun) or auto");
  }
  return o.launch == "thread-per-gpu" || (o.launch == "auto" && machines > 1);
}

std::uint64_t bucket_flag(const SimOptions& o, std::uint64_t fallback) {
  if (o.bucket_bytes.empty()) return fallback;
  if (o.bucket_bytes == "0" || o.bucket_bytes == "0B") return 0;
  return parse_size_flag("--bucket-bytes", o.bucket_bytes);
}

void run_model_broadcast(const SimOptions& o, sim::ResultTable& table, const topo::Topology& topology,
                         sim::Framework framework, const std::function<sim::RunResult(sim::Program)>& run) {
  const int n = static_cast<int>(topology.gpus.size());
  const models::ModelSpec& spec = models::model_spec(o.model_name);
  std::vector<int> gpus = parse_gpu_list(o.gpus, n);
  if (o.root < 0 || o.root >= static_cast<int>(gpus.size()))
    throw UsageError("--root " + std::to_string(o.root) + " is not a rank of --gpus");
  std::rotate(gpus.begin(), gpus.begin() + o.root, gpus.end());  // the program broadcasts from its first GPU
  const auto pieces = sim::tensor_pieces(spec, bucket_flag(o, 0));
  sim::Program p = sim::broadcast_pieces_program(gpus, pieces, framework, thread_per_gpu(o, topology, gpus));
  p.iterations = o.iterations;
  p.warmup = o.warmup;
  const sim::RunResult r = run(std::move(p));
  const double t_us = static_cast<double>(r.per_iteration) / 1e6;
  table.columns = {"model", "tensors", "broadcasts", "bytes", "time_us", "algbw_gbps", "busbw_gbps", "ngpus"};
  table.units = {"", "", "", "B", "us", "GB/s", "GB/s", ""};
  table.metadata["gpus"] = gpus;
  table.metadata["bucket_bytes"] = bucket_flag(o, 0);
  const double bw = static_cast<double>(spec.bytes()) / (t_us * 1e3);
  table.rows.push_back({spec.name, static_cast<std::int64_t>(spec.tensors().size()),
                        static_cast<std::int64_t>(pieces.size()), static_cast<std::int64_t>(spec.bytes()),
                        t_us, bw, bw, static_cast<std::int64_t>(gpus.size())});
}

void run_weight_sync(const SimOptions& o, sim::ResultTable& table, const models::ModelParams& params,
                     sim::Framework framework, const topo::Topology& topology,
                     const std::function<sim::RunResult(sim::Program)>& run) {
  const int n = static_cast<int>(topology.gpus.size());
  if (o.model_name.empty()) throw UsageError("weight-sync needs --model NAME (`commsim model list`)");
  const models::ModelSpec& spec = models::model_spec(o.model_name);
  if (o.from.empty()) throw UsageError("weight-sync needs --from GPU[S] (the trainers)");
  const std::vector<int> from = parse_gpu_list(o.from, n);
  if (o.to.empty()) throw UsageError("weight-sync needs --to LIST (the rollout GPUs)");
  const std::vector<int> to = parse_gpu_list(o.to, n);
  const std::vector<std::vector<int>> groups = sim::rollout_groups(from, to);
  if (o.method != "broadcast" && o.method != "p2p-engine")
    throw UsageError("--method must be broadcast or p2p-engine");
  auto s = [](Picoseconds ps) { return static_cast<double>(ps) / 1e12; };
  std::vector<std::pair<std::string, double>> timings;
  std::int64_t pieces_count = 0;
  if (o.method == "broadcast") {
    const auto pieces = sim::tensor_pieces(spec, bucket_flag(o, 0));
    pieces_count = static_cast<std::int64_t>(pieces.size() * groups.size());
    // Groups that span machines are driven by one process per GPU (a host thread cannot reach another
    // machine).
    bool spans = false;
    for (const auto& g : groups) spans = spans || sim::machine_count(topology, g) > 1;
    sim::Program p = sim::broadcast_pieces_program(groups, pieces, framework, spans);
    p.warmup = 0;  // one push from idle GPUs: total_transfer_time runs from the first call to the last byte
    p.iterations = 1;
    const sim::RunResult r = run(std::move(p));
    const Picoseconds push = r.per_iteration;
    // Host enqueue time of one push: what the trainers' loops spend issuing the broadcasts (the slowest).
    const Picoseconds enqueue = std::min(*std::max_element(r.issue_end.begin(), r.issue_end.end()), push);
    timings = {{"init_process_group_time", s(params.comm_init)},
               {"broadcast_time", s(enqueue)},
               {"sync_time", s(push - enqueue)},
               {"total_transfer_time", s(push)},
               {"destroy_group_time", s(params.comm_destroy)}};
  } else {
    for (const auto& g : groups) {
      for (int r : g) {
        if (topology.gpus.at(r).node != topology.gpus.at(g[0]).node) {
          throw UsageError("--method p2p-engine copies with cudaMemcpyPeerAsync, which cannot reach " +
                           topology.gpus.at(r).name + " on another machine than trainer " +
                           topology.gpus.at(g[0]).name + "; use --method broadcast across machines");
        }
      }
    }
    const auto tensors = sim::tensor_pieces(spec, 0);
    pieces_count = static_cast<std::int64_t>(tensors.size() * to.size());
    sim::Program p = sim::copy_engine_program(groups, tensors, o.streams);
    p.warmup = 0;
    p.iterations = 1;
    const sim::RunResult r = run(std::move(p));
    const Picoseconds push = r.per_iteration;
    // Each trainer's engine submits its own tasks; the largest share sets the submit time.
    std::size_t largest = 0;
    for (const auto& g : groups) largest = std::max(largest, g.size() - 1);
    const Picoseconds submit =
        std::min(push, static_cast<Picoseconds>(tensors.size() * largest) * params.copy_submit);
    timings = {{"register_and_start_time", s(params.engine_register)},
               {"update_weights_time", 0.0},
               {"submit_tasks_time", s(submit)},
               {"wait_transfers_time", s(push - submit)},
               {"sync_time", 0.0},
               {"total_transfer_time", s(push)},
               {"stop_time", s(params.engine_stop)}};
  }
  table.columns = {"model", "method", "tensors", "transfers", "bytes", "timing", "time_ms"};
  table.units = {"", "", "", "", "B", "", "ms"};
  table.metadata["from"] = from;
  table.metadata["groups"] = groups;
  table.metadata["to"] = to;
  table.metadata["bucket_bytes"] = bucket_flag(o, 0);
  table.metadata["streams"] = o.streams;
  table.metadata["note"] =
      "total_transfer_time and its parts are simulated; init/destroy/register/stop are the parameter set's "
      "fixed costs ([setup]); update_weights_time (the engine's CPU-side task list, ~25 us measured) is not "
      "modelled and reads 0";
  const auto tensor_count = static_cast<std::int64_t>(spec.tensors().size());
  for (const auto& [name, v] : timings) {
    table.rows.push_back({spec.name, o.method, tensor_count, pieces_count,
                          static_cast<std::int64_t>(spec.bytes()), name, v * 1e3});
  }
}

void run_grad_sync(const SimOptions& o, sim::ResultTable& table, sim::Runtime& runtime,
                   sim::Framework framework, const std::function<sim::RunResult(sim::Program)>& run) {
  if (o.model_name.empty()) throw UsageError("grad-sync needs --model NAME (`commsim model list`)");
  const models::ModelSpec& spec = models::model_spec(o.model_name);
  const std::uint64_t bucket = bucket_flag(o, 25ULL << 20);
  const auto buckets = sim::tensor_pieces(spec, bucket, true);
  table.columns = {"case",  "topology", "model",      "ngpus",      "buckets", "bucket_bytes",
                   "bytes", "time_us",  "algbw_gbps", "busbw_gbps", "speedup"};
  table.units = {"", "", "", "", "", "B", "B", "us", "GB/s", "GB/s", "x"};
  struct Case {
    std::string name, topology;
    double time_us;
    int ngpus;
  };
  std::vector<Case> cases;
  auto one = [&](sim::Runtime& rt, const std::function<sim::RunResult(sim::Program)>& runner,
                 const std::string& name, const std::string& topology) {
    const std::vector<int> gpus = parse_gpu_list(o.gpus, static_cast<int>(rt.topology().gpus.size()));
    sim::Program p = sim::grad_sync_program(gpus, buckets, framework);
    p.warmup = 0;
    p.iterations = 1;
    cases.push_back({name, topology, static_cast<double>(runner(std::move(p)).per_iteration) / 1e6,
                     static_cast<int>(gpus.size())});
  };
  one(runtime, run, "this", o.topology);
  if (!o.baseline_topology.empty() || !o.baseline_nccl_env.empty()) {
    // The same gradient sync on the baseline: another fabric, or other NCCL knobs (e.g. NCCL_IB_DISABLE=1).
    std::vector<std::string> env = o.nccl_env;
    env.insert(env.end(), o.baseline_nccl_env.begin(), o.baseline_nccl_env.end());
    const std::string path = o.baseline_topology.empty() ? o.topology : o.baseline_topology;
    const auto base = load_setup(path, o.gpu, o.params, o.model, env);
    sim::Runtime rt(base->topology, *base->model);
    one(
        rt, [&](sim::Program p) { return rt.run(p); }, "baseline", path);
    table.metadata["baseline_nccl_env"] = o.baseline_nccl_env;
  }
  const double base = cases.back().time_us;
  for (const Case& c : cases) {
    const double algbw = static_cast<double>(spec.bytes()) / (c.time_us * 1e3);
    table.rows.push_back({c.name, c.topology, spec.name, std::int64_t{c.ngpus},
                          static_cast<std::int64_t>(buckets.size()), static_cast<std::int64_t>(bucket),
                          static_cast<std::int64_t>(spec.bytes()), c.time_us, algbw,
                          algbw * models::busbw_factor("all_reduce", c.ngpus), base / c.time_us});
  }
}

void run_workload(const std::string& workload, const SimOptions& o) {
  const auto& hw = models::HardwareCatalog::builtin();
  if (!o.gpu.empty()) hw.gpu(o.gpu);
  if (o.iterations < 1 || o.iterations > 1000) throw UsageError("--iterations must be between 1 and 1000");
  if (o.warmup < 0 || o.warmup > 100) throw UsageError("--warmup must be between 0 and 100");
  const std::uint64_t min_b = parse_size_flag("--min-bytes", o.min_bytes);
  const std::uint64_t max_b = parse_size_flag("--max-bytes", o.max_bytes);
  const auto sizes = size_sweep(min_b, max_b, o.factor);
  const auto setup = load_setup(o.topology, o.gpu, o.params, o.model, o.nccl_env);
  const models::NcclEnv& env = setup->env;
  const models::ModelParams& params = setup->params;
  const topo::Topology& topology = setup->topology;
  const int n = static_cast<int>(topology.gpus.size());
  sim::Runtime runtime(topology, *setup->model);

  sim::ResultTable table;
  table.metadata = {{"workload", workload},
                    {"topology", o.topology},
                    {"gpu_model", topology.nodes.empty() ? "" : topology.nodes[0].gpu_model},
                    {"model", o.model},
                    {"params", params.name},
                    {"params_source", params.source},
                    {"nccl_env", env.settings},
                    {"iterations", o.iterations},
                    {"warmup", o.warmup},
                    {"commsim_version", COMMSIM_VERSION}};
  std::unique_ptr<sim::Trace> trace = o.trace.empty() ? nullptr : std::make_unique<sim::Trace>();
  const sim::Framework framework = sim::parse_framework(o.framework);
  table.metadata["framework"] = o.framework;
  EngineCount engine;
  auto run = [&](sim::Program p) {
    p.iterations = o.iterations;
    p.warmup = o.warmup;
    apply_framework(p, framework);
    sim::RunResult r = runtime.run(p, trace.get());
    engine.events += r.events;
    engine.flows += r.flows;
    if (trace) trace->set_offset(trace->offset() + r.iteration_end.back() + 10 * kPicosPerMicro);
    return r;
  };
  // One row: prefix cells, bytes, time and bandwidths, the workload's own cells, then how NCCL moved the
  // data.
  using Cells = std::vector<sim::ResultTable::Cell>;
  auto add_row = [&](Cells prefix, std::uint64_t bytes, const sim::RunResult& r, Cells middle) {
    const double t_us = static_cast<double>(r.per_iteration) / 1e6;
    const double algbw = t_us > 0 ? static_cast<double>(bytes) / (t_us * 1e3) : 0.0;
    const sim::OpRecord op = r.ops.empty() ? sim::OpRecord{} : r.ops.front();
    Cells row = std::move(prefix);
    row.emplace_back(static_cast<std::int64_t>(bytes));
    row.emplace_back(t_us);
    row.emplace_back(algbw);
    row.emplace_back(algbw);
    row.insert(row.end(), middle.begin(), middle.end());
    row.emplace_back(std::in_place_type<std::string>, models::transport_name(op.transport));
    row.emplace_back(std::in_place_type<std::string>, models::protocol_name(op.protocol));
    row.emplace_back(std::in_place_type<std::int64_t>, op.channels);
    table.rows.push_back(std::move(row));  // busbw = algbw for point-to-point workloads
  };

  EngineProgress engine_progress(runtime);
  EmitOnInterrupt emit_on_interrupt(o, table, engine.events, engine.flows);
  if (workload == "p2p") {
    std::vector<std::pair<int, int>> pairs;
    if (!o.pairs.empty()) {
      if (o.pairs != "all") throw UsageError("--pairs takes 'all' (or use --src and --dst)");
      if (o.src >= 0 || o.dst >= 0) throw UsageError("--pairs all and --src/--dst exclude each other");
      for (int a = 0; a < n; ++a) {
        for (int b = 0; b < n; ++b) {
          if (a != b) pairs.push_back({a, b});
        }
      }
    } else {
      if (o.src < 0 || o.dst < 0) throw UsageError("p2p needs --src A --dst B, or --pairs all");
      parse_gpu_list(std::to_string(o.src), n);
      parse_gpu_list(std::to_string(o.dst), n);
      pairs.push_back({o.src, o.dst});
    }
    table.columns = {"src",        "dst",       "bytes",    "time_us", "algbw_gbps",
                     "busbw_gbps", "transport", "protocol", "channels"};
    table.units = {"", "", "B", "us", "GB/s", "GB/s", "", "", ""};
    Progress progress(pairs.size() * sizes.size());
    for (const auto& [a, b] : pairs) {
      for (std::uint64_t bytes : sizes) {
        add_row({std::int64_t{a}, std::int64_t{b}}, bytes, run(sim::p2p_program(a, b, bytes)), {});
        progress.step();
      }
    }
  } else if (workload == "sendrecv" || workload == "alltoall") {
    const std::vector<int> gpus = parse_gpu_list(o.gpus, n);
    const bool alltoall = workload == "alltoall";
    const bool per_gpu = thread_per_gpu(o, topology, gpus);
    table.columns = {"bytes", "time_us",   "algbw_gbps", "busbw_gbps",
                     "ngpus", "transport", "protocol",   "channels"};
    table.units = {"B", "us", "GB/s", "GB/s", "", "", "", ""};
    table.metadata["gpus"] = gpus;
    table.metadata["launch"] = per_gpu ? "thread-per-gpu" : "single-thread";
    // nccl-tests busbw: algbw for sendrecv, algbw x (n-1)/n for alltoall.
    const double factor = models::busbw_factor(workload, static_cast<int>(gpus.size()));
    Progress progress(sizes.size());
    for (std::uint64_t bytes : sizes) {
      add_row({}, bytes,
              run(alltoall ? sim::alltoall_program(gpus, bytes, per_gpu)
                           : sim::sendrecv_program(gpus, bytes, per_gpu)),
              {static_cast<std::int64_t>(gpus.size())});
      auto& row = table.rows.back();
      row[3] = std::get<double>(row[2]) * factor;
      progress.step();
    }
  } else if (workload == "exchange") {
    const std::vector<int> pr = parse_gpu_list(o.pair, n);
    if (pr.size() != 2) throw UsageError("--pair takes two GPUs, e.g. --pair 0,1");
    if (o.mode.empty()) throw UsageError("exchange needs --mode sequential|overlapped|batched");
    const sim::ExchangeMode mode = sim::parse_exchange_mode(o.mode);
    table.columns = {"bytes", "time_us",   "algbw_gbps", "busbw_gbps",
                     "mode",  "transport", "protocol",   "channels"};
    table.units = {"B", "us", "GB/s", "GB/s", "", "", "", ""};
    table.metadata["pair"] = pr;
    table.metadata["mode"] = o.mode;
    Progress progress(sizes.size());
    for (std::uint64_t bytes : sizes) {
      add_row({}, bytes, run(sim::exchange_program(pr[0], pr[1], mode, bytes)),
              {std::string(sim::exchange_mode_name(mode))});
      progress.step();
    }
  } else if (workload == "pipeline") {
    run_pipeline(o, table, n, run_raw(runtime, trace.get(), engine));
  } else if (workload == "weight-sync") {
    run_weight_sync(o, table, params, framework, topology, run_raw(runtime, trace.get(), engine));
  } else if (workload == "grad-sync") {
    run_grad_sync(o, table, runtime, framework, run_raw(runtime, trace.get(), engine));
  } else if (workload == "broadcast" && !o.model_name.empty()) {
    run_model_broadcast(o, table, topology, framework, run_raw(runtime, trace.get(), engine));
  } else {
    const models::CollOp op = sim::parse_coll_op(workload);
    const std::vector<int> gpus = parse_gpu_list(o.gpus, n);
    const bool per_gpu = thread_per_gpu(o, topology, gpus);
    const double factor = models::busbw_factor(workload, static_cast<int>(gpus.size()));
    table.columns = {"bytes", "time_us",   "algbw_gbps", "busbw_gbps",
                     "ngpus", "algorithm", "protocol",   "channels"};
    table.units = {"B", "us", "GB/s", "GB/s", "", "", "", ""};
    table.metadata["gpus"] = gpus;
    table.metadata["launch"] = per_gpu ? "thread-per-gpu" : "single-thread";
    table.metadata["root"] = o.root;
    Progress progress(sizes.size());
    for (std::uint64_t bytes : sizes) {
      const sim::RunResult r = run(sim::collective_program(gpus, op, bytes, o.root, per_gpu, framework));
      const double t_us = static_cast<double>(r.per_iteration) / 1e6;
      const double algbw = t_us > 0 ? static_cast<double>(bytes) / (t_us * 1e3) : 0.0;
      const sim::CollectiveRecord c = r.collectives.empty() ? sim::CollectiveRecord{} : r.collectives.front();
      table.rows.push_back({static_cast<std::int64_t>(bytes), t_us, algbw, algbw * factor,
                            static_cast<std::int64_t>(gpus.size()),
                            std::string(models::algorithm_name(c.algorithm)),
                            std::string(models::protocol_name(c.protocol)), std::int64_t{c.channels}});
      progress.step();
    }
  }
  table.metadata["engine_events"] = engine.events;
  table.metadata["engine_flows"] = engine.flows;
  add_band(table, params, setup->params_note);
  emit(o, table, trace.get());
}

void add_common(CLI::App* app, SimOptions& o) {
  app->add_option("--topology", o.topology, "Topology: `nvidia-smi topo -m` output or a what-if .toml")
      ->required();
  app->add_option("--gpu", o.gpu, "GPU generation (`commsim topo gpus`); default: what the topology says");
  app->add_option("--params", o.params,
                  "Parameter set (TOML) over the defaults, e.g. models/params/h200.toml;\ndefault: "
                  "models/params/nccl-default.toml");
  std::string models_help = "Cost (transfer) model:";
  for (const auto& m : models::transfer_models())
    models_help += "\n  " + std::string(m.name) + ": " + std::string(m.description);
  app->add_option("--cost-model", o.model, models_help)->capture_default_str();
  app->add_option(
         "--nccl-env", o.nccl_env,
         "NCCL knob as a what-if, repeatable: KEY=VALUE, e.g. NCCL_PROTO=Simple,\nNCCL_P2P_DISABLE=1, "
         "NCCL_BUFFSIZE=8MiB. Known: " +
             models::NcclEnv::known_keys())
      ->allow_extra_args(false);
  app->add_option("--min-bytes", o.min_bytes, "Smallest size, with a unit")->capture_default_str();
  app->add_option("--max-bytes", o.max_bytes, "Largest size, with a unit")->capture_default_str();
  app->add_option("--factor", o.factor, "Multiply the size by this between steps")->capture_default_str();
  app->add_option("--iterations", o.iterations, "Timed iterations per size (back to back, as nccl-tests -n)")
      ->capture_default_str();
  app->add_option("--warmup", o.warmup, "Untimed iterations before them (nccl-tests -w)")
      ->capture_default_str();
  app->add_option("--format", o.format, "Output format")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  app->add_option("-o,--out", o.out, "Write results to this file (atomically) instead of standard output");
  app->add_option(
      "--trace", o.trace,
      "Write the simulated timeline as Chrome trace-event JSON (open in\nPerfetto): kernels per GPU "
      "and stream, link utilisation counters");
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  CLI::App* simulate = app.add_subcommand(
      "simulate", "Predict NCCL communication time for a workload on a topology, over a range of sizes");
  simulate->require_subcommand(1);
  simulate->footer(R"(
OUTPUT
  Size sweeps: one row per size (and per GPU pair for p2p). time_us is what nccl-tests' time column means:
  the time per operation when operations run back to back; algbw_gbps = bytes / time in GB/s; busbw_gbps
  applies nccl-tests' factor (1 for p2p, sendrecv, broadcast and reduce; (n-1)/n for alltoall, all_gather and
  reduce_scatter; 2(n-1)/n for all_reduce). The last columns say how NCCL moves the data: transport or
  algorithm, protocol and channels. pipeline prints the step time and per stage compute, communication and
  bubble time; weight-sync prints named timings; grad-sync the sync time and, with a baseline, the speedup.)");

  struct Workload {
    const char* name;
    const char* help;
  };
  const Workload workloads[] = {
      {"p2p",
       "Unidirectional send from --src to --dst (or every directed pair with\n--pairs all), one host "
       "thread per GPU"},
      {"sendrecv",
       "nccl-tests sendrecv_perf over --gpus: every rank sends to the next and\nreceives from the "
       "previous in one group"},
      {"alltoall",
       "nccl-tests alltoall_perf over --gpus, as NCCL runs it: grouped sends\nand receives of bytes/n to and "
       "from every other rank"},
      {"exchange",
       "Bidirectional exchange between --pair A,B with --mode sequential (one\nstream), overlapped "
       "(separate communicators and streams) or batched\n(one group)"},
      {"all_reduce",
       "nccl-tests all_reduce_perf over --gpus (Ring/Tree, LL/LL128/Simple as NCCL's tuner picks)"},
      {"all_gather", "nccl-tests all_gather_perf over --gpus (size = the gathered output)"},
      {"reduce_scatter", "nccl-tests reduce_scatter_perf over --gpus (size = the input)"},
      {"broadcast",
       "nccl-tests broadcast_perf over --gpus from --root; or with --model NAME\nthe model's tensors, one "
       "broadcast per tensor or per --bucket-bytes bucket"},
      {"reduce", "nccl-tests reduce_perf over --gpus to --root"},
      {"pipeline",
       "Megatron 1F1B pipeline step over --stages P GPUs (or --gpus), or the\ninterleaved schedule "
       "(--schedule interleaved --chunks V); P2P --mode\nsequential|overlapped|batched"},
      {"weight-sync",
       "RL trainer-to-rollout weight push of --model from --from to --to, by\nNCCL broadcast or a "
       "copy-engine P2P engine (--method)"},
      {"grad-sync", "Data-parallel gradient all-reduce of --model over --gpus in --bucket-bytes buckets"},
  };
  for (const Workload& w : workloads) {
    auto opts = std::make_shared<SimOptions>();
    CLI::App* sub = simulate->add_subcommand(w.name, w.help);
    add_common(sub, *opts);
    const std::string name = w.name;
    sub->add_option("--framework", opts->framework,
                    "nccl: plain NCCL calls; torch: as PyTorch issues them (its NCCL\nstream per group, "
                    "serialized unbatched P2P on groups > 2 ranks,\nper-call overhead)")
        ->check(CLI::IsMember({"nccl", "torch"}))
        ->capture_default_str();
    const bool coll = name == "all_reduce" || name == "all_gather" || name == "reduce_scatter" ||
                      name == "broadcast" || name == "reduce";
    if (name == "p2p") {
      sub->add_option("--src", opts->src, "Sending GPU index");
      sub->add_option("--dst", opts->dst, "Receiving GPU index");
      sub->add_option("--pairs", opts->pairs, "'all': every directed GPU pair");
    } else if (name == "sendrecv" || name == "alltoall" || coll) {
      sub->add_option("--gpus", opts->gpus, "GPUs in rank order: 0-3, 0,2,4, all")->capture_default_str();
      sub->add_option("--launch", opts->launch,
                      "single-thread: one host thread drives every GPU (nccl-tests -g N);\nthread-per-gpu: "
                      "commsim-measure's default, or one process per GPU (mpirun);\nauto: single-thread "
                      "inside one machine, thread-per-gpu across machines")
          ->check(CLI::IsMember({"auto", "single-thread", "thread-per-gpu"}))
          ->capture_default_str();
      if (name == "broadcast" || name == "reduce")
        sub->add_option("--root", opts->root, "Root rank (index into --gpus)")->capture_default_str();
      if (name == "broadcast") {
        sub->add_option("--model", opts->model_name,
                        "Broadcast this model's tensors (`commsim model list`) instead of a\nsize sweep");
        sub->add_option("--bucket-bytes", opts->bucket_bytes,
                        "With --model: coalesce consecutive tensors into buckets of at most\nthis size "
                        "(default: one broadcast per tensor)");
      }
    } else if (name == "exchange") {
      sub->add_option("--pair", opts->pair, "The two GPUs, e.g. 0,1")->required();
      sub->add_option("--mode", opts->mode, "sequential, overlapped or batched")->required();
    } else if (name == "pipeline") {
      sub->add_option("--stages", opts->stages, "Pipeline stages P: rank r runs stage r on GPU r");
      sub->add_option("--gpus", opts->gpus, "GPUs for the stages in order (instead of the first P)");
      sub->add_option("--microbatches", opts->microbatches, "Microbatches per step, a list: 4,16")
          ->required();
      sub->add_option("--activation-bytes", opts->activation_bytes,
                      "Activation (and gradient) bytes per microbatch, a list: 4MiB,64MiB")
          ->required();
      sub->add_option("--fwd-us", opts->fwd_us, "Forward compute per stage and microbatch, us")->required();
      sub->add_option("--bwd-us", opts->bwd_us, "Backward compute per stage and microbatch, us")->required();
      sub->add_option("--mode", opts->mode,
                      "P2P modes, a list of sequential, overlapped, batched (default: all)");
      sub->add_option(
             "--schedule", opts->schedule,
             "1f1b (Megatron's non-interleaved) or interleaved (virtual pipeline\nstages, --chunks V)")
          ->check(CLI::IsMember({"1f1b", "interleaved"}))
          ->capture_default_str();
      sub->add_option(
          "--chunks", opts->chunks,
          "Model chunks per stage for --schedule interleaved; --fwd-us/--bwd-us\nare per stage and "
          "split evenly over the chunks");
    } else if (name == "weight-sync") {
      sub->add_option("--model", opts->model_name, "Model whose weights are pushed (`commsim model list`)")
          ->required();
      sub->add_option("--from", opts->from,
                      "Trainer GPU(s): 0, or 0-7 for several trainers, each pushing to its contiguous\n"
                      "share of --to in parallel (one communicator or engine per trainer)")
          ->required();
      sub->add_option("--to", opts->to, "Rollout GPUs: 1-3")->required();
      sub->add_option("--method", opts->method, "broadcast (NCCL) or p2p-engine (copy engines)")
          ->check(CLI::IsMember({"broadcast", "p2p-engine"}))
          ->required();
      sub->add_option("--bucket-bytes", opts->bucket_bytes,
                      "broadcast: coalesce consecutive tensors into buckets of at most this\nsize");
      sub->add_option("--streams", opts->streams, "p2p-engine: copy streams per rollout GPU")
          ->capture_default_str();
    } else if (name == "grad-sync") {
      sub->add_option("--model", opts->model_name, "Model whose gradients are reduced")->required();
      sub->add_option("--gpus", opts->gpus, "Data-parallel GPUs: 0-15, all")->capture_default_str();
      sub->add_option("--bucket-bytes", opts->bucket_bytes, "Gradient bucket size (DDP's default 25MiB)");
      sub->add_option("--baseline-topology", opts->baseline_topology,
                      "Also run on this fabric (e.g. the TCP what-if) and report the speedup");
      sub->add_option(
          "--baseline-nccl-env", opts->baseline_nccl_env,
          "Also run with these extra NCCL knobs (e.g. NCCL_IB_DISABLE=1: TCP\nsockets over the same "
          "NICs) and report the speedup");
    }
    if (name == "grad-sync") opts->framework = "torch";
    const std::string example =
        name == "p2p"        ? "--src 0 --dst 1"
        : name == "exchange" ? "--pair 0,1 --mode batched"
        : name == "pipeline"
            ? "--stages 4 --microbatches 4,16 --activation-bytes 4MiB,64MiB --fwd-us 500 --bwd-us 1000"
        : name == "weight-sync" ? "--model qwen2.5-32b --from 0 --to 1-3 --method broadcast"
        : name == "grad-sync"   ? "--model llama-3-8b --gpus all --baseline-nccl-env NCCL_IB_DISABLE=1"
                                : "--gpus 0-3";
    sub->footer("\nEXAMPLE\n  commsim simulate " + name + " --topology topologies/library/real/h200x4.topo " +
                example + " --params models/params/h200.toml");
    sub->callback([opts, name] { run_workload(name, *opts); });
  }
}

}  // namespace commsim::cli
