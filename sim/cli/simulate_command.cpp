// `commsim simulate p2p|sendrecv|exchange`: size sweeps through the engine, as tables, CSV or JSON.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "commsim/core/error.hpp"
#include "commsim/core/text.hpp"
#include "commsim/models/hardware.hpp"
#include "commsim/models/nccl_env.hpp"
#include "commsim/models/params.hpp"
#include "commsim/models/transfer.hpp"
#include "commsim/sim/runtime.hpp"
#include "commsim/sim/workloads.hpp"
#include "commsim/topo/load.hpp"

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
  std::string launch = "single-thread";
};

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

void run_workload(const std::string& workload, const SimOptions& o) {
  const auto& hw = models::HardwareCatalog::builtin();
  if (!o.gpu.empty()) hw.gpu(o.gpu);
  const models::NcclEnv env = models::NcclEnv::parse(o.nccl_env);
  const models::ModelParams params =
      o.params.empty() ? models::ModelParams::defaults() : models::ModelParams::load(o.params);
  const auto model = models::make_transfer_model(o.model, params, env);
  if (o.iterations < 1 || o.iterations > 1000) throw UsageError("--iterations must be between 1 and 1000");
  if (o.warmup < 0 || o.warmup > 100) throw UsageError("--warmup must be between 0 and 100");
  const std::uint64_t min_b = sim::parse_size_flag("--min-bytes", o.min_bytes);
  const std::uint64_t max_b = sim::parse_size_flag("--max-bytes", o.max_bytes);
  const auto sizes = sim::size_sweep(min_b, max_b, o.factor);

  topo::Diagnostics diag;
  const topo::Topology topology = topo::load_topology(o.topology, {o.gpu, ""}, diag);
  for (const auto& w : diag.warnings()) std::cerr << "commsim: warning: " << w << "\n";
  const int n = static_cast<int>(topology.gpus.size());
  sim::Runtime runtime(topology, *model);

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
  auto run = [&](sim::Program p) {
    p.iterations = o.iterations;
    p.warmup = o.warmup;
    sim::RunResult r = runtime.run(p, trace.get());
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
    for (auto& c : middle) row.push_back(std::move(c));
    row.push_back(std::string(models::transport_name(op.transport)));
    row.push_back(std::string(models::protocol_name(op.protocol)));
    row.push_back(std::int64_t{op.channels});
    table.rows.push_back(std::move(row));  // busbw = algbw for point-to-point workloads
  };

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
      sim::parse_gpu_list(std::to_string(o.src), n);
      sim::parse_gpu_list(std::to_string(o.dst), n);
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
    const std::vector<int> gpus = sim::parse_gpu_list(o.gpus, n);
    const bool alltoall = workload == "alltoall";
    const bool thread_per_gpu = o.launch == "thread-per-gpu";
    table.columns = {"bytes", "time_us",   "algbw_gbps", "busbw_gbps",
                     "ngpus", "transport", "protocol",   "channels"};
    table.units = {"B", "us", "GB/s", "GB/s", "", "", "", ""};
    table.metadata["gpus"] = gpus;
    table.metadata["launch"] = o.launch;
    // nccl-tests busbw: algbw for sendrecv, algbw x (n-1)/n for alltoall.
    const double factor =
        alltoall ? static_cast<double>(gpus.size() - 1) / static_cast<double>(gpus.size()) : 1.0;
    Progress progress(sizes.size());
    for (std::uint64_t bytes : sizes) {
      add_row({}, bytes,
              run(alltoall ? sim::alltoall_program(gpus, bytes, thread_per_gpu)
                           : sim::sendrecv_program(gpus, bytes, thread_per_gpu)),
              {static_cast<std::int64_t>(gpus.size())});
      auto& row = table.rows.back();
      row[3] = std::get<double>(row[2]) * factor;
      progress.step();
    }
  } else if (workload == "exchange") {
    const std::vector<int> pr = sim::parse_gpu_list(o.pair, n);
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
  }
  emit(o, table, trace.get());
}

void add_common(CLI::App* app, SimOptions& o) {
  app->add_option("--topology", o.topology, "Topology: `nvidia-smi topo -m` output or a what-if .toml")
      ->required();
  app->add_option("--gpu", o.gpu, "GPU generation (`commsim topo gpus`); default: what the topology says");
  app->add_option("--params", o.params,
                  "Parameter set (TOML) over the defaults, e.g. models/params/h200.toml;\ndefault: "
                  "models/params/nccl-default.toml");
  std::string models_help = "Transfer model:";
  for (const auto& m : models::transfer_models())
    models_help += "\n  " + std::string(m.name) + ": " + std::string(m.description);
  app->add_option("--model", o.model, models_help)->capture_default_str();
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
  One row per size (and per GPU pair for p2p). time_us is what nccl-tests' time column means: the time per
  operation when operations run back to back; algbw_gbps = bytes / time in GB/s; busbw_gbps = algbw for
  point-to-point workloads and algbw x (n-1)/n for alltoall. Columns transport, protocol and channels say how
  NCCL moves the data.)");

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
  };
  for (const Workload& w : workloads) {
    auto opts = std::make_shared<SimOptions>();
    CLI::App* sub = simulate->add_subcommand(w.name, w.help);
    add_common(sub, *opts);
    const std::string name = w.name;
    if (name == "p2p") {
      sub->add_option("--src", opts->src, "Sending GPU index");
      sub->add_option("--dst", opts->dst, "Receiving GPU index");
      sub->add_option("--pairs", opts->pairs, "'all': every directed GPU pair");
    } else if (name == "sendrecv" || name == "alltoall") {
      sub->add_option("--gpus", opts->gpus, "GPUs in rank order: 0-3, 0,2,4, all")->capture_default_str();
      sub->add_option("--launch", opts->launch,
                      "single-thread: one host thread drives every GPU (nccl-tests -g N);\nthread-per-gpu: "
                      "commsim-measure's default")
          ->check(CLI::IsMember({"single-thread", "thread-per-gpu"}))
          ->capture_default_str();
    } else {
      sub->add_option("--pair", opts->pair, "The two GPUs, e.g. 0,1")->required();
      sub->add_option("--mode", opts->mode, "sequential, overlapped or batched")->required();
    }
    sub->footer("\nEXAMPLE\n  commsim simulate " + name + " --topology topologies/library/real/h200x4.topo " +
                (name == "p2p"        ? "--src 0 --dst 1"
                 : name == "exchange" ? "--pair 0,1 --mode batched"
                                      : "--gpus 0-3") +
                " --params models/params/h200.toml");
    sub->callback([opts, name] { run_workload(name, *opts); });
  }
}

}  // namespace commsim::cli
