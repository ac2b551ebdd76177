// `commsim simulate <workload>`: size sweeps and schedules through the engine, as tables, CSV or JSON.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "commands.hpp"
#include "commsim/core/args.hpp"
#include "commsim/core/error.hpp"
#include "commsim/core/progress.hpp"
#include "commsim/core/text.hpp"
#include "commsim/models/hardware.hpp"
#include "commsim/models/nccl_env.hpp"
#include "commsim/models/params.hpp"
#include "commsim/models/transfer.hpp"
#include "commsim/sim/runtime.hpp"
#include "commsim/sim/schedules.hpp"
#include "commsim/sim/sim_workload.hpp"
#include "commsim/sim/workloads.hpp"
#include "commsim/topo/load.hpp"
#include "commsim/workloads/cli_flags.hpp"
#include "commsim/workloads/model_spec.hpp"
#include "commsim/workloads/registry.hpp"
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
  std::string framework = "nccl";
  int gpu_count = -1;             ///< -g/--gpu-count N: the first N GPUs (-1: not given)
  std::string progress = "auto";  ///< --progress auto|always|never
  sim::WorkloadArgs args;         ///< the workload's own flags (workloads::WorkloadSpec::flags)
};

/// -g/--gpu-count N (nccl-tests' GPU count): GPUs 0..N-1, from which --gpus, when given, picks (it must stay
/// inside them); without --gpus, --gpus becomes 0-(N-1).
void apply_gpu_count(SimOptions& o, bool gpus_given) {
  if (o.gpu_count < 0) return;
  if (o.gpu_count < 1) throw UsageError("--gpu-count must be at least 1");
  if (gpus_given) {
    const std::string& gpus = o.args.text["--gpus"];
    try {
      parse_gpu_list(gpus, o.gpu_count);
    } catch (const UsageError&) {
      throw UsageError("--gpus " + gpus + " names GPUs outside --gpu-count " + std::to_string(o.gpu_count) +
                       " (GPUs 0-" + std::to_string(o.gpu_count - 1) + ")");
    }
    return;
  }
  o.args.text["--gpus"] = o.gpu_count == 1 ? "0" : "0-" + std::to_string(o.gpu_count - 1);
}

/// The flags given on the command line, by long name ("--min-bytes"), whatever form was typed (-b).
std::set<std::string> given_flags(const CLI::App* sub) {
  std::set<std::string> out;
  for (const CLI::Option* opt : sub->get_options()) {
    if (opt->count() == 0) continue;
    for (const std::string& l : opt->get_lnames()) out.insert("--" + l);
  }
  return out;
}

/// No silent ignoring: a flag given for a workload, method or mode that does not use it is a usage error that
/// says why. One table of rules, checked before anything is loaded.
void check_flags_apply(const std::string& workload, const std::set<std::string>& given, const SimOptions& o) {
  auto has = [&](const char* f) { return given.count(f) > 0; };
  auto refuse = [](const std::string& flag, const std::string& why) {
    throw UsageError(flag + " does not apply here: " + why);
  };
  const std::string& method = o.args.str("--method");
  const bool model_broadcast = workload == "broadcast" && !o.args.str("--model").empty();
  const bool whole_model = workload == "weight-sync" || workload == "grad-sync";
  for (const char* f : {"--min-bytes", "--max-bytes", "--factor"}) {
    if (!has(f)) continue;
    if (workload == "pipeline")
      refuse(f, "pipeline sends --activation-bytes per microbatch (a list: 4MiB,64MiB), not a size sweep");
    if (whole_model || model_broadcast)
      refuse(f, workload + " --model sends the model's tensors, whose sizes come from the model spec");
  }
  for (const char* f : {"--iterations", "--warmup"}) {
    if (has(f) && whole_model) {
      refuse(f, workload + " simulates one " + (workload == "weight-sync" ? "push" : "gradient sync") +
                    " from idle GPUs, as it is timed (no warmup, one iteration)");
    }
  }
  if (workload == "weight-sync" && method == "p2p-engine") {
    if (has("--bucket-bytes"))
      refuse("--bucket-bytes",
             "--method p2p-engine copies every tensor on its own (buckets are --method broadcast)");
    if (has("--framework"))
      refuse("--framework",
             "--method p2p-engine copies with cudaMemcpyPeerAsync; neither NCCL nor PyTorch issues it");
    if (has("--nccl-env")) refuse("--nccl-env", "--method p2p-engine makes no NCCL calls (copy engines)");
  }
  if (workload == "weight-sync" && method == "broadcast" && has("--streams"))
    refuse("--streams",
           "copy streams are --method p2p-engine's; NCCL broadcast runs on its communicator's stream");
  if (workload == "broadcast" && !model_broadcast && has("--bucket-bytes"))
    refuse("--bucket-bytes", "buckets coalesce a model's tensors: give --model NAME, or drop --bucket-bytes");
  if (workload == "alltoallv" && !o.args.str("--counts").empty()) {
    for (const char* f : {"--skew", "--skew-seed"}) {
      if (has(f)) refuse(f, "--counts gives the per-peer sizes; --skew and --skew-seed are the alternative");
    }
  }
  if (workload == "alltoallv" && has("--skew-seed") && o.args.number("--skew") == 0)
    refuse("--skew-seed",
           "with --skew 0 every peer gets the same share, so the seeded order changes nothing");
}

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

/// Progress of one simulate command on one line of standard error (core/progress.hpp): after 2 s, the runs
/// done with a smoothed ETA (the runs of one command weigh the same: they move the same flows at other
/// sizes, and the simulator's time follows the flows), and while one run lasts, where the engine stands.
class Progress {
 public:
  explicit Progress(ProgressMode mode) : line_(mode) {}
  bool enabled() const { return line_.enabled(); }
  void start(std::size_t total) {
    eta_ = std::make_unique<EtaEstimator>(std::vector<double>(total, 1.0));
    done_ = 0;
  }
  void step() {
    if (!eta_) return;
    eta_->done(done_++, line_.elapsed());
    line_.show(progress_text(*eta_, "runs", line_.elapsed()));
  }
  void engine(const sim::RunProgress& p) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "simulating: %.3f ms simulated, %llu events, %llu flows (%zu moving), %s",
                  static_cast<double>(p.now) / 1e9, static_cast<unsigned long long>(p.events),
                  static_cast<unsigned long long>(p.flows), p.active_flows,
                  format_duration(line_.elapsed()).c_str());
    line_.show(eta_ ? progress_text(*eta_, "runs", line_.elapsed()) + "; " + buf : std::string(buf));
  }
  void finish() { line_.finish(); }

 private:
  ProgressLine line_;
  std::unique_ptr<EtaEstimator> eta_;
  std::size_t done_ = 0;
};

/// Adds the prediction band beside the time column (time_us: time_us_lo, time_us_hi), from
/// the row's size and the parameter set's [band], and says in the output which set and band were used.
double cell_number(const sim::ResultTable::Cell& c) {
  if (const auto* i = std::get_if<std::int64_t>(&c)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&c)) return *d;
  return 0;
}

void add_band(sim::ResultTable& table, const models::ModelParams& params, const std::string& note,
              bool widened) {
  const auto bytes_col =
      std::find(table.columns.begin(), table.columns.end(), "bytes") - table.columns.begin();
  for (const char* name : {"time_us"}) {
    const auto it = std::find(table.columns.begin(), table.columns.end(), name);
    if (it == table.columns.end()) continue;
    const auto col = it - table.columns.begin();
    table.columns.insert(table.columns.begin() + col + 1,
                         {std::string(name) + "_lo", std::string(name) + "_hi"});
    if (static_cast<std::size_t>(col) < table.units.size()) {
      const std::string unit = table.units[static_cast<std::size_t>(col)];
      table.units.insert(table.units.begin() + col + 1, {unit, unit});
    }
    for (std::size_t i = 0; i < table.rows.size(); ++i) {
      auto& row = table.rows[i];
      const double t = cell_number(row[static_cast<std::size_t>(col)]);
      const std::uint64_t bytes =
          static_cast<std::size_t>(bytes_col) < row.size()
              ? static_cast<std::uint64_t>(cell_number(row[static_cast<std::size_t>(bytes_col)]))
              : models::kBandRegimeBytes;
      if (i < table.unbanded.size() && table.unbanded[i]) {  // a constant, not a prediction: no band
        row.insert(row.begin() + col + 1, {std::nan(""), std::nan("")});
        continue;
      }
      // A part the user gave (a pipeline step's compute bound) is exact: the band is the rest's.
      const double exact = i < table.band_exact_us.size() ? std::clamp(table.band_exact_us[i], 0.0, t) : 0.0;
      const models::Band b = models::band_of(params, bytes, t - exact);
      row.insert(row.begin() + col + 1, {exact + b.lo_us, exact + b.hi_us});
    }
  }
  char band[320];
  std::snprintf(
      band, sizeof band, "band: -%.1f%%/+%.1f%% below 1 MiB, -%.1f%%/+%.1f%% from 1 MiB (%s)",
      100 * params.band.latency_below, 100 * params.band.latency_above, 100 * params.band.bandwidth_below,
      100 * params.band.bandwidth_above,
      params.fitted.empty() ? "datasheet band: no fitted set"
      : widened ? "the fit's band, widened to the datasheet band where that is wider: no network in the fit"
                : "from the fit's residuals, measured spread and standard errors");
  table.notes.insert(table.notes.begin(), {note, band});
  table.metadata["params_note"] = note;
  table.metadata["params_fitted"] = params.fitted;
  table.metadata["band"] = {
      {"latency_below", params.band.latency_below},     {"latency_above", params.band.latency_above},
      {"bandwidth_below", params.band.bandwidth_below}, {"bandwidth_above", params.band.bandwidth_above},
      {"regime_bytes", models::kBandRegimeBytes},       {"kind", band_kind(params, widened)}};
}

/// Set by Ctrl-C (SIGINT); the runtime polls it between events. A second Ctrl-C kills at once.
std::atomic<bool> g_interrupted{false};
extern "C" void on_sigint(int) {
  g_interrupted.store(true);
  std::signal(SIGINT, SIG_DFL);
}

/// Ctrl-C ends the simulation cleanly, and, when progress is shown, a long run reports where it stands
/// (simulated time, events, flows) about twice a second.
class EngineProgress {
 public:
  EngineProgress(sim::Runtime& runtime, Progress& progress) {
    std::signal(SIGINT, on_sigint);
    sim::RunHooks hooks;
    hooks.cancel = &g_interrupted;
    if (progress.enabled()) hooks.progress = [&progress](const sim::RunProgress& p) { progress.engine(p); };
    runtime.set_hooks(std::move(hooks));
  }
  ~EngineProgress() { std::signal(SIGINT, SIG_DFL); }
  EngineProgress(const EngineProgress&) = delete;
  EngineProgress& operator=(const EngineProgress&) = delete;
};

void emit(const SimOptions& o, sim::ResultTable& table, const sim::Trace* trace) {
  std::string text;
  const bool to_stdout = o.out.empty() || o.out == "-";
  if (o.format == "csv") {
    // The CSV has no comment lines: what they said (the parameter set and its band) goes to a sidecar
    // beside a file (OUT.meta.json), or to standard error beside standard output.
    text = table.to_csv();
    if (to_stdout) {
      for (const std::string& n : table.notes) std::cerr << "commsim: " << n << "\n";
    } else {
      write_file_atomic(std::filesystem::path(o.out).replace_extension(".meta.json").string(),
                        table.csv_meta().dump(2) + "\n");
    }
  } else if (o.format == "json") {
    text = table.to_json().dump(2) + "\n";
  } else {
    text = table.to_table();
  }
  if (to_stdout) {
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

/// Hands `p`'s object over to the process's end instead of destroying it: a large cluster's topology and
/// runtime are millions of heap blocks whose destructors only free them (~0.2 s, a sixth of a 16,384-GPU
/// all-reduce's run), and the operating system takes the memory back at exit at once. A simulate command is
/// the process's last work. Kept reachable from a static list, so leak checkers see no leak.
template <typename T>
void leave_to_exit(std::unique_ptr<T> p) {
  static auto* const kept = new std::vector<void*>();
  kept->push_back(p.release());
}

void run_workload(const std::string& workload, const SimOptions& o) {
  OutputGuard guard;
  guard_topology(guard, "--topology", o.topology);
  guard.input("--params", o.params);
  guard.input("--counts", o.args.str("--counts"));
  guard_topology(guard, "--baseline-topology", o.args.str("--baseline-topology"));
  guard.output("--out", o.out);
  guard.output("--trace", o.trace);
  guard.check();
  const auto& hw = models::HardwareCatalog::builtin();
  if (!o.gpu.empty()) hw.gpu(o.gpu);
  if (o.iterations < 1 || o.iterations > 1000) throw UsageError("--iterations must be between 1 and 1000");
  if (o.warmup < 0 || o.warmup > 100) throw UsageError("--warmup must be between 0 and 100");
  const std::uint64_t min_b = parse_size_flag("--min-bytes", o.min_bytes);
  const std::uint64_t max_b = parse_size_flag("--max-bytes", o.max_bytes);
  const auto sizes = size_sweep(min_b, max_b, o.factor);
  auto setup = load_setup(o.topology, o.gpu, o.params, o.model, o.nccl_env);
  const models::NcclEnv& env = setup->env;
  const models::ModelParams& params = setup->params;
  const topo::Topology& topology = setup->topology;
  auto runtime_owned = std::make_unique<sim::Runtime>(topology, *setup->model);
  sim::Runtime& runtime = *runtime_owned;

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
  // Runs a program exactly as built (its own warmup and iterations), with the trace if one is kept.
  auto run_raw = [&](sim::Program p) {
    sim::RunResult r;
    try {
      r = runtime.run(p, trace.get(), {.op_records = 1});  // a row reports the first transfer
    } catch (const ValueError& e) {
      // An engine backstop (the event limit, simulated time overflow) does not know the inputs: name them.
      throw ValueError("--topology " + o.topology + (o.params.empty() ? "" : ", --params " + o.params) +
                       ": simulating " + workload + ": " + e.what());
    }
    engine.events += r.events;
    engine.flows += r.flows;
    if (trace) trace->set_offset(trace->offset() + r.iteration_end.back() + 10 * kPicosPerMicro);
    return r;
  };
  Progress progress(parse_progress_mode(o.progress));
  sim::SimContext ctx{workload,    topology,     params,   runtime, o.topology, o.nccl_env, sizes, framework,
                      o.framework, o.iterations, o.warmup, {},      {},         {},         {},    {}};
  ctx.run_raw = run_raw;
  ctx.run = [&](sim::Program p) {
    p.iterations = o.iterations;
    p.warmup = o.warmup;
    apply_framework(p, framework);
    return run_raw(std::move(p));
  };
  ctx.progress_start = [&](std::size_t total) { progress.start(total); };
  ctx.progress_step = [&] { progress.step(); };
  ctx.with_setup = [&](const std::string& path, const std::vector<std::string>& knobs,
                       const std::function<void(sim::Runtime&)>& body) {
    const auto other = load_setup(path, o.gpu, o.params, o.model, knobs);
    sim::Runtime rt(other->topology, *other->model);
    body(rt);
  };

  EngineProgress engine_progress(runtime, progress);
  EmitOnInterrupt emit_on_interrupt(o, table, engine.events, engine.flows);
  // Destroyed first, also when an exception leaves: the progress line is erased before anything else is
  // printed (the interrupted rows, the error).
  struct FinishProgress {
    Progress& p;
    ~FinishProgress() { p.finish(); }
  } finish_progress{progress};
  sim::sim_workload(workload).simulate(ctx, o.args, table);
  table.metadata["engine_events"] = engine.events;
  table.metadata["engine_flows"] = engine.flows;
  add_band(table, params, setup->params_note, setup->band_widened);
  emit(o, table, trace.get());
  leave_to_exit(std::move(runtime_owned));
  leave_to_exit(std::move(setup));
}

void add_common(CLI::App* app, SimOptions& o) {
  add_setup_flags(app, {&o.topology, &o.gpu, &o.params, &o.model, &o.nccl_env}, SetupRole::WhatIf);
  app->add_option("-b,--min-bytes", o.min_bytes, "Smallest size: 8, 1K, 128M (nccl-tests), 1KiB, 1MB")
      ->capture_default_str();
  app->add_option("-e,--max-bytes", o.max_bytes, "Largest size, written as --min-bytes")
      ->capture_default_str();
  app->add_option("-f,--factor", o.factor, "Multiply the size by this between steps")->capture_default_str();
  app->add_option("-n,--iterations", o.iterations,
                  "Timed iterations per size (back to back, as nccl-tests -n)")
      ->capture_default_str();
  app->add_option("-w,--warmup", o.warmup, "Untimed iterations before them (nccl-tests -w)")
      ->capture_default_str();
  app->add_option("--progress", o.progress,
                  "auto: a progress line with an ETA on standard error when it is a terminal and\nthe "
                  "simulation runs over 2 s; always (a line every 5 s when not a terminal); never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  app->add_option("--format", o.format, "Output format")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  app->add_option("-o,--out", o.out,
                  "Write results to this file (atomically) instead of standard output\n(--format csv: its "
                  "metadata and notes beside it in OUT.meta.json)");
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
  the time per operation when operations run back to back (with a thread per GPU, each thread's time
  averaged over the threads, as nccl-tests reports it); algbw_gbps = bytes / time in GB/s; busbw_gbps
  applies nccl-tests' factor (1 for p2p, sendrecv, broadcast and reduce; (n-1)/n for alltoall, all_gather and
  reduce_scatter; 2(n-1)/n for all_reduce). The last columns say how NCCL moves the data: transport or
  algorithm, protocol and channels. pipeline prints the step time and per stage compute, communication and
  bubble time; weight-sync prints named timings; grad-sync the sync time and, with a baseline, the speedup.)");

  for (const workloads::WorkloadSpec& w : workloads::registry()) {
    sim::sim_workload(w.name);  // every registered workload has its simulator side
    auto opts = std::make_shared<SimOptions>();
    opts->args = workloads::WorkloadArgs::defaults(w, workloads::Side::Simulate);
    CLI::App* sub = simulate->add_subcommand(w.name, w.summary);
    add_common(sub, *opts);
    const std::string name = w.name;
    if (w.family == workloads::Family::GradientSync) opts->framework = "torch";  // DDP's all-reduce
    sub->add_option("--framework", opts->framework,
                    "nccl: plain NCCL calls; torch: as PyTorch issues them (its NCCL\nstream per group, "
                    "serialized unbatched P2P on groups > 2 ranks,\nper-call overhead)")
        ->check(CLI::IsMember({"nccl", "torch"}))
        ->capture_default_str();
    workloads::add_workload_flags(sub, w, workloads::Side::Simulate, opts->args);
    if (opts->args.text.count("--gpus")) {
      sub->add_option("-g,--gpu-count", opts->gpu_count,
                      "Use the first N GPUs (as nccl-tests -g N); --gpus picks among them");
    }
    sub->footer("\nEXAMPLE\n  commsim simulate " + name + " --topology topologies/library/real/h200x4.topo " +
                w.example + " --params models/params/h200.toml");
    sub->callback([opts, name, sub] {
      const CLI::Option* gpus = sub->get_option_no_throw("--gpus");
      apply_gpu_count(*opts, gpus && gpus->count() > 0);
      check_flags_apply(name, given_flags(sub), *opts);
      run_workload(name, *opts);
    });
  }
}

}  // namespace commsim::cli
