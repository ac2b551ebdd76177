// `commsim sweep SPEC.toml` (a grid of what-ifs on every core, or one shard of it) and `commsim sweep merge`.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "commsim/core/args.hpp"
#include "commsim/core/error.hpp"
#include "commsim/core/output_guard.hpp"
#include "commsim/core/progress.hpp"
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
  // nccl-tests-style overrides of the spec's axes (empty / -1: the spec's own)
  std::string min_bytes, max_bytes;
  double factor = 0;
  std::string gpus;
  int gpu_count = -1;
  int iterations = -1;
  int warmup = -1;
  std::string progress = "auto";
};

/// The command line's replacements for the spec's axes: sizes from -b/-e/-f (1B, 1GiB and 2 where one is
/// left out, as in simulate), GPUs from --gpus or -g N (GPUs 0..N-1), -n and -w.
sim::SweepOverrides overrides(const SweepOptions& o) {
  sim::SweepOverrides v;
  if (!o.min_bytes.empty() || !o.max_bytes.empty() || o.factor != 0) {
    v.sizes = size_sweep(parse_size_flag("--min-bytes", o.min_bytes.empty() ? "1" : o.min_bytes),
                         parse_size_flag("--max-bytes", o.max_bytes.empty() ? "1G" : o.max_bytes),
                         o.factor == 0 ? 2.0 : o.factor);
  }
  if (!o.gpus.empty() && o.gpu_count >= 0) throw UsageError("give --gpus LIST or --gpu-count N, not both");
  if (!o.gpus.empty()) v.gpus = o.gpus;
  if (o.gpu_count == 0) throw UsageError("--gpu-count must be at least 1");
  if (o.gpu_count > 0) v.gpus = o.gpu_count == 1 ? "0" : "0-" + std::to_string(o.gpu_count - 1);
  if (o.iterations >= 0) v.iterations = o.iterations;
  if (o.warmup >= 0) v.warmup = o.warmup;
  return v;
}

void run(const SweepOptions& o) {
  sim::SweepSpec spec = sim::SweepSpec::load(o.spec);
  spec.override_axes(overrides(o));
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
    guard.output_in("--out", o.out, {shard_file, sim::sweep_meta_path(shard_file)});
  } else {
    guard.output_in("--out", o.out, {"results.csv", "results.meta.json", "summary.html"});
  }
  guard.check();
  create_output_directory("--out", o.out);
  // Progress: a line on a terminal after 2 s, its ETA weighted by each point's estimated work.
  ProgressLine line(parse_progress_mode(o.progress));
  std::unique_ptr<EtaEstimator> eta;
  sim::SweepProgress progress;
  progress.start = [&](const std::vector<double>& work) { eta = std::make_unique<EtaEstimator>(work); };
  progress.done = [&](std::size_t item) {
    eta->done(item, line.elapsed());
    line.show("sweep " + progress_text(*eta, "points", line.elapsed()));
  };
  const auto rows = sim::run_sweep(spec, shard, jobs, progress);
  line.finish();
  std::size_t failed = 0;
  for (const auto& r : rows) failed += r.error.empty() ? 0 : 1;
  const std::string csv = sim::sweep_csv(rows);
  const std::string meta = sim::sweep_meta(spec, shard, rows);
  if (shard.n > 1) {
    const std::string path = (fs::path(o.out) / shard_file).string();
    write_file_atomic(path, csv);
    write_file_atomic(sim::sweep_meta_path(path), meta);
    std::fprintf(stderr,
                 "sweep: shard %d/%d: %zu points (%zu failed) in %s; merge the shards with `commsim sweep "
                 "merge`\n",
                 shard.k, shard.n, rows.size(), failed, path.c_str());
  } else {
    write_file_atomic((fs::path(o.out) / "results.csv").string(), csv);
    write_file_atomic((fs::path(o.out) / "results.meta.json").string(), meta);
    write_file_atomic((fs::path(o.out) / "summary.html").string(), sim::sweep_html(spec.name, rows));
    std::fprintf(stderr,
                 "sweep: %zu points (%zu failed) in %s/results.csv (+ results.meta.json) and summary.html\n",
                 rows.size(), failed, o.out.c_str());
  }
  if (failed > 0) {
    throw PartialFailure(
        std::to_string(failed) + " of " + std::to_string(rows.size()) +
        " point(s) failed; their rows have status 'failed' and an error column that says why");
  }
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
  guard.output_in("--out", o.out, {"results.csv", "results.meta.json", "summary.html"});
  guard.check();
  std::vector<sim::SweepFile> files;
  for (const auto& f : paths) {
    const std::string meta = sim::sweep_meta_path(f);
    files.push_back({f, read_file(f), meta, read_file(meta)});
  }
  std::vector<sim::SweepRow> rows;
  const sim::SweepMerged merged = sim::merge_sweep_files(files, rows);
  create_output_directory("--out", o.out);
  write_file_atomic((fs::path(o.out) / "results.csv").string(), merged.csv);
  write_file_atomic((fs::path(o.out) / "results.meta.json").string(), merged.meta);
  write_file_atomic((fs::path(o.out) / "summary.html").string(), sim::sweep_html(merged.name, rows));
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
  sub->add_option("--out", o->out,
                  "Output directory: results.csv (+ results.meta.json) and summary.html, or\n"
                  "shard-K-of-N.csv (+ shard-K-of-N.meta.json)")
      ->capture_default_str();
  sub->add_option("--shard", o->shard,
                  "K/N: run only the points with index % N == K (0-based); auto: K and N from Slurm\n"
                  "job arrays (SLURM_ARRAY_TASK_ID/COUNT) or MPI (OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE)");
  sub->add_option("--jobs", o->jobs, "Threads (default: every core)");
  sub->add_option("-b,--min-bytes", o->min_bytes,
                  "Replace the spec's sizes by a sweep from this size: 8, 1K, 128M (nccl-tests), 1KiB, 1MB\n"
                  "(default 1B when -e or -f is given)");
  sub->add_option("-e,--max-bytes", o->max_bytes,
                  "... up to this size (default 1GiB when -b or -f is given)");
  sub->add_option("-f,--factor", o->factor, "... multiplied by this between steps (default 2)");
  sub->add_option("--gpus", o->gpus, "Replace the spec's GPU sets by this one list: 0-3, 0,2, all");
  sub->add_option("-g,--gpu-count", o->gpu_count,
                  "Replace the spec's GPU sets by GPUs 0..N-1 (nccl-tests -g N)");
  sub->add_option("-n,--iterations", o->iterations, "Replace the spec's timed iterations per point");
  sub->add_option("-w,--warmup", o->warmup, "Replace the spec's untimed iterations per point");
  sub->add_option("--progress", o->progress,
                  "auto: a progress line with an ETA on standard error when it is a terminal and the\n"
                  "sweep runs over 2 s; always (a line every 5 s when not a terminal); never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  sub->footer(R"(
EXAMPLES
  commsim sweep sim/sweeps/allreduce-scaling.toml --out sweep-out
  sbatch --array=0-15 --wrap 'commsim sweep spec.toml --shard auto --out shards'   # 16 Slurm array tasks
  mpirun -np 16 commsim sweep spec.toml --shard auto --out shards                   # or one MPI rank per shard
  commsim sweep merge shards --out sweep-out                                         # all shards, checked
  commsim sweep sim/sweeps/allreduce-scaling.toml -b 8 -e 128M -f 4 -n 5 --out s     # nccl-tests-style axes

EXIT STATUS
  0 every point ran; 6 some points failed (results.csv is written; their status is 'failed' and the error
  column says why); 1 internal error; 2 usage; 3 bad spec file; 4 I/O.)");
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
