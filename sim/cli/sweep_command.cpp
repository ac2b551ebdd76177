// `commsim sweep SPEC.toml` (a grid of what-ifs on every core, or one shard of it) and `commsim sweep merge`.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "commsim/core/error.hpp"
#include "commsim/core/output_guard.hpp"
#include "commsim/core/text.hpp"
#include "commsim/sim/sweep.hpp"
#include "setup.hpp"

namespace commsim::cli {
namespace {

namespace fs = std::filesystem;

struct SweepOptions {
  std::string spec;
  std::string out = "sweep-out";
  std::string shard;
  int jobs = 0;
  std::vector<std::string> inputs;
};

void run(const SweepOptions& o) {
  const sim::SweepSpec spec = sim::SweepSpec::load(o.spec);
  const sim::Shard shard = o.shard.empty() ? sim::Shard{} : sim::Shard::parse(o.shard);
  const int jobs = o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const std::string shard_file =
      "shard-" + std::to_string(shard.k) + "-of-" + std::to_string(shard.n) + ".csv";
  OutputGuard guard;
  guard.input("SPEC", o.spec);
  for (const auto& t : spec.topologies) guard_topology(guard, "SPEC " + o.spec + " (topologies)", t);
  for (const auto& p : spec.params) {
    if (p != "default") guard.input("SPEC " + o.spec + " (params)", p);
  }
  if (shard.n > 1) {
    guard.output_in("--out", o.out, {shard_file});
  } else {
    guard.output_in("--out", o.out, {"results.csv", "summary.html"});
  }
  guard.check();
  create_output_directory("--out", o.out);
  const bool tty = ::isatty(STDERR_FILENO);
  const auto start = std::chrono::steady_clock::now();
  std::size_t last_decile = 0;
  const auto rows = sim::run_sweep(spec, shard, jobs, [&](std::size_t done, std::size_t total) {
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double eta = el / static_cast<double>(done) * static_cast<double>(total - done);
    if (tty) {
      const int w = 30, f = static_cast<int>(w * done / total);
      std::fprintf(stderr, "\r[%s%s] %zu/%zu points, ETA %.0fs ", std::string(f, '=').c_str(),
                   std::string(w - f, ' ').c_str(), done, total, eta);
      if (done == total) std::fprintf(stderr, "\n");
    } else if (done * 10 / total != last_decile || done == total) {
      last_decile = done * 10 / total;
      std::fprintf(stderr, "sweep: %zu/%zu points, %.0f s elapsed, ETA %.0f s\n", done, total, el, eta);
    }
  });
  std::size_t failed = 0;
  for (const auto& r : rows) failed += r.error.empty() ? 0 : 1;
  const std::string csv = sim::sweep_csv(spec, shard, rows);
  if (shard.n > 1) {
    const std::string path = (fs::path(o.out) / shard_file).string();
    write_file_atomic(path, csv);
    std::fprintf(stderr,
                 "sweep: shard %d/%d: %zu points (%zu failed) in %s; merge the shards with `commsim sweep "
                 "merge`\n",
                 shard.k, shard.n, rows.size(), failed, path.c_str());
  } else {
    write_file_atomic((fs::path(o.out) / "results.csv").string(), csv);
    write_file_atomic((fs::path(o.out) / "summary.html").string(), sim::sweep_html(spec.name, rows));
    std::fprintf(stderr, "sweep: %zu points (%zu failed) in %s/results.csv and summary.html\n", rows.size(),
                 failed, o.out.c_str());
  }
  if (failed > 0) throw Error(std::to_string(failed) + " point(s) failed; their error column says why");
}

void merge(const SweepOptions& o) {
  std::vector<std::string> paths;
  for (const auto& in : o.inputs) {
    if (fs::is_directory(in)) {
      std::vector<std::string> found;
      for (const auto& e : fs::directory_iterator(in)) {
        const std::string name = e.path().filename().string();
        if (name.rfind("shard-", 0) == 0 && e.path().extension() == ".csv")
          found.push_back(e.path().string());
      }
      std::sort(found.begin(), found.end());
      paths.insert(paths.end(), found.begin(), found.end());
    } else {
      paths.push_back(in);
    }
  }
  OutputGuard guard;
  guard.inputs("SHARDS", paths);
  guard.output_in("--out", o.out, {"results.csv", "summary.html"});
  guard.check();
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& f : paths) files.push_back({f, read_file(f)});
  std::vector<sim::SweepRow> rows;
  const std::string csv = sim::merge_sweep_csvs(files, rows);
  create_output_directory("--out", o.out);
  write_file_atomic((fs::path(o.out) / "results.csv").string(), csv);
  const std::string first = csv.substr(0, csv.find('\n'));
  const auto at = first.find("name=");
  const std::string name =
      at == std::string::npos ? "sweep" : first.substr(at + 5, first.find(' ', at) - at - 5);
  write_file_atomic((fs::path(o.out) / "summary.html").string(), sim::sweep_html(name, rows));
  std::fprintf(stderr, "sweep merge: %zu shard file(s), %zu points in %s/results.csv and summary.html\n",
               files.size(), rows.size(), o.out.c_str());
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  CLI::App* sub = app.add_subcommand(
      "sweep",
      "Run a grid of what-ifs (topologies x parameter sets x NCCL knobs x GPU sets x workloads x sizes)\n"
      "on every core, or one shard of it under a cluster launcher; `sweep merge` joins the shards");
  sub->add_option("spec", o->spec, "Sweep specification (TOML; see sim/README.md, Sweeps)");
  sub->add_option("--out", o->out, "Output directory: results.csv and summary.html, or shard-K-of-N.csv")
      ->capture_default_str();
  sub->add_option("--shard", o->shard,
                  "K/N: run only the points with index % N == K (0-based); auto: K and N from Slurm\n"
                  "job arrays (SLURM_ARRAY_TASK_ID/COUNT) or MPI (OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE)");
  sub->add_option("--jobs", o->jobs, "Threads (default: every core)");
  sub->footer(R"(
EXAMPLES
  commsim sweep sim/sweeps/allreduce-scaling.toml --out sweep-out
  sbatch --array=0-15 --wrap 'commsim sweep spec.toml --shard auto --out shards'   # 16 Slurm array tasks
  mpirun -np 16 commsim sweep spec.toml --shard auto --out shards                   # or one MPI rank per shard
  commsim sweep merge shards --out sweep-out                                         # all shards, checked)");
  CLI::App* m = sub->add_subcommand(
      "merge", "Merge shard CSVs (files or directories) into results.csv and summary.html");
  m->add_option("inputs", o->inputs, "shard-K-of-N.csv files, or directories holding them")->required();
  m->add_option("--out", o->out, "Output directory")->capture_default_str();
  m->callback([o] { merge(*o); });
  sub->callback([o, sub, m] {
    if (m->parsed()) return;
    if (o->spec.empty()) throw UsageError("sweep needs a SPEC.toml (or `sweep merge SHARDS...`)");
    run(*o);
  });
}

}  // namespace commsim::cli
