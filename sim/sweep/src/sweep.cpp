// commsim sweep: grid expansion, sharding, parallel execution, CSV/HTML output and shard merging.
#include "commsim/sim/sweep.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "commsim/core/csv.hpp"
#include "commsim/core/error.hpp"
#include "commsim/core/limits.hpp"
#include "commsim/core/progress.hpp"
#include "commsim/core/svg_plot.hpp"
#include "commsim/core/text.hpp"
#include "commsim/core/toml_fields.hpp"
#include "commsim/core/units.hpp"
#include "commsim/models/nccl_env.hpp"
#include "commsim/models/params.hpp"
#include "commsim/models/transfer.hpp"
#include "commsim/sim/runtime.hpp"
#include "commsim/sim/schedules.hpp"
#include "commsim/sim/sim_workload.hpp"
#include "commsim/sim/workloads.hpp"
#include "commsim/topo/load.hpp"

namespace commsim::sim {
namespace {

namespace fs = std::filesystem;
using commsim::TomlFields;

/// A sweep point is one size of one workload over a GPU list: the workloads whose rows are sizes over GPUs.
bool sweepable(const workloads::WorkloadSpec& w) {
  return w.family == workloads::Family::PointToPoint || w.family == workloads::Family::Ring ||
         w.family == workloads::Family::Collective;
}

std::vector<std::string> string_list(const TomlFields& f, std::string_view key, bool required) {
  std::vector<std::string> out;
  const toml::node* n = f.table().get(key);
  if (!n) {
    if (required) f.fail(key, "missing: a list of strings");
    return out;
  }
  const toml::array* a = n->as_array();
  if (!a || a->empty()) f.fail(key, "expected a non-empty list of strings");
  for (const auto& v : *a) {
    if (!v.is_string()) f.fail(key, "expected a list of strings");
    out.emplace_back(*v.value<std::string_view>());
  }
  return out;
}

std::string resolve(const std::string& path, const std::string& spec_file) {
  std::error_code ec;
  const fs::path beside = fs::path(spec_file).parent_path() / path;
  if (!fs::path(path).is_absolute() && fs::exists(beside, ec)) return beside.lexically_normal().string();
  return path;
}

/// The CSV's columns, in order.
const std::vector<std::string>& columns() {
  static const std::vector<std::string> names = {
      "point",      "topology",   "params",    "param_set", "nccl_env",   "gpus",
      "ngpus",      "workload",   "bytes",     "time_us",   "time_us_lo", "time_us_hi",
      "algbw_gbps", "busbw_gbps", "algorithm", "protocol",  "status",     "error"};
  return names;
}

/// The column header line, "\n" included.
std::string column_header() {
  CsvWriter w;
  for (const std::string& c : columns()) w.field(c);
  return w.end_row().str();
}

/// One worker's model and runtime for a (topology, params, knobs) combination.
struct Loaded {
  std::unique_ptr<models::TransferModel> model;
  std::unique_ptr<Runtime> runtime;
};

}  // namespace

namespace {

/// The point count for a refusal: the product of the axes' lengths, "more than 2^64" when it overflows.
std::string points_text(const SweepSpec& s) {
  const std::size_t n = s.points();
  if (n != std::numeric_limits<std::size_t>::max()) return std::to_string(n);
  return std::to_string(s.topologies.size()) + " x " + std::to_string(s.params.size()) + " x " +
         std::to_string(s.nccl_env.size()) + " x " + std::to_string(s.gpus.size()) + " x " +
         std::to_string(s.workloads.size()) + " x " + std::to_string(s.sizes.size()) + " (more than 2^64)";
}

}  // namespace

SweepSpec SweepSpec::parse(std::string_view text, const std::string& file) {
  const toml::table root = parse_toml(text, file);
  TomlFields top(root, file, "");
  top.reject_unknown_keys({"name", "grid", "iterations", "warmup"});
  SweepSpec s;
  s.file = file;
  s.hash = 1469598103934665603ULL;  // FNV-1a: the same on every machine, so shards can be checked against
                                    // each other
  for (unsigned char c : text) s.hash = (s.hash ^ c) * 1099511628211ULL;
  s.name = top.string("name").value_or(fs::path(file).stem().string());
  // Range-checked as read (64-bit), before narrowing: 2^32 + 1 iterations is not 1.
  const std::int64_t iterations = top.integer("iterations").value_or(3);
  const std::int64_t warmup = top.integer("warmup").value_or(1);
  if (iterations < 1 || iterations > 1000) top.fail("iterations", "must be between 1 and 1000");
  if (warmup < 0 || warmup > 1000) top.fail("warmup", "must be between 0 and 1000");
  s.iterations = static_cast<int>(iterations);
  s.warmup = static_cast<int>(warmup);
  const toml::table* grid = top.subtable("grid");
  if (!grid) top.fail("grid", "missing [grid]: the axes of the sweep");
  TomlFields g(*grid, file, "grid");
  g.reject_unknown_keys({"topologies", "params", "nccl_env", "gpus", "workloads", "sizes"});
  for (const auto& t : string_list(g, "topologies", true)) s.topologies.push_back(resolve(t, file));
  for (const auto& p : string_list(g, "params", false))
    s.params.push_back(p == "default" ? p : resolve(p, file));
  if (s.params.empty()) s.params.push_back("default");
  s.gpus = string_list(g, "gpus", false);
  if (s.gpus.empty()) s.gpus.push_back("all");
  s.workloads = string_list(g, "workloads", true);
  for (const auto& w : s.workloads) {
    const workloads::WorkloadSpec* spec = workloads::lookup_workload(w);
    if (!spec || !sweepable(*spec))
      g.fail("workloads", "unknown workload '" + w + "'; valid: " + workloads::workload_names(sweepable));
  }
  for (const auto& z : string_list(g, "sizes", true)) {
    try {
      s.sizes.push_back(parse_size(z));
      check_size(s.sizes.back(), "size");
    } catch (const ValueError& e) {
      g.fail("sizes", e.what());
    }
    if (s.sizes.back() == 0) g.fail("sizes", "sizes must be at least 1B");
  }
  if (const toml::node* n = grid->get("nccl_env")) {
    const toml::array* a = n->as_array();
    if (!a || a->empty())
      g.fail("nccl_env", "expected a list of knob lists, e.g. [[], [\"NCCL_ALGO=Ring\"]]");
    for (const auto& set : *a) {
      const toml::array* knobs = set.as_array();
      if (!knobs) g.fail("nccl_env", "expected a list of knob lists, e.g. [[], [\"NCCL_ALGO=Ring\"]]");
      std::vector<std::string> k;
      for (const auto& v : *knobs) {
        if (!v.is_string()) g.fail("nccl_env", "knobs are strings KEY=VALUE");
        k.emplace_back(*v.value<std::string_view>());
      }
      try {
        models::NcclEnv::parse(k);
      } catch (const Error& e) {
        g.fail("nccl_env", e.what());
      }
      s.nccl_env.push_back(std::move(k));
    }
  } else {
    s.nccl_env.push_back({});
  }
  if (s.points() > kMaxSweepPoints) {
    top.fail("grid", "refused: " + points_text(s) + " points; a sweep has at most " +
                         std::to_string(kMaxSweepPoints) + " (core/limits.hpp)");
  }
  return s;
}

SweepSpec SweepSpec::load(const std::string& path) {
  return parse(read_file(path), path);
}

void SweepSpec::override_axes(const SweepOverrides& o) {
  std::string what;  // a canonical text of the overrides, folded into the hash
  if (o.sizes) {
    sizes = *o.sizes;
    what += "sizes=";
    for (std::uint64_t z : sizes) what += std::to_string(z) + ",";
  }
  if (o.gpus) {
    gpus = {*o.gpus};
    what += ";gpus=" + *o.gpus;
  }
  if (o.iterations) {
    if (*o.iterations < 1 || *o.iterations > 1000)
      throw UsageError("--iterations must be between 1 and 1000");
    iterations = *o.iterations;
    what += ";iterations=" + std::to_string(iterations);
  }
  if (o.warmup) {
    if (*o.warmup < 0 || *o.warmup > 1000) throw UsageError("--warmup must be between 0 and 1000");
    warmup = *o.warmup;
    what += ";warmup=" + std::to_string(warmup);
  }
  if (what.empty()) return;
  // Shards of one spec run with different overrides must not merge: the hash covers them.
  for (unsigned char c : ";override;" + what) hash = (hash ^ c) * 1099511628211ULL;
  if (points() > kMaxSweepPoints) {
    throw UsageError("refused: the sweep has " + points_text(*this) + " points; a sweep has at most " +
                     std::to_string(kMaxSweepPoints) + " (core/limits.hpp)");
  }
}

std::size_t SweepSpec::points() const {
  // Checked: axes whose product overflows (four of 65,536 entries) count as the most there can be, so they
  // are refused by the limit instead of wrapping to 0 points.
  std::size_t n = 1;
  for (const std::size_t axis :
       {topologies.size(), params.size(), nccl_env.size(), gpus.size(), workloads.size(), sizes.size()}) {
    if (__builtin_mul_overflow(n, axis, &n)) return std::numeric_limits<std::size_t>::max();
  }
  return n;
}

SweepPoint sweep_point(const SweepSpec& spec, std::size_t index) {
  SweepPoint p;
  p.index = index;
  std::size_t i = index;
  p.size = i % spec.sizes.size();
  i /= spec.sizes.size();
  p.workload = i % spec.workloads.size();
  i /= spec.workloads.size();
  p.gpus = i % spec.gpus.size();
  i /= spec.gpus.size();
  p.nccl_env = i % spec.nccl_env.size();
  i /= spec.nccl_env.size();
  p.params = i % spec.params.size();
  i /= spec.params.size();
  p.topology = i;
  return p;
}

Shard Shard::parse(const std::string& text) {
  Shard s;
  std::string t = text;
  if (t == "auto") {
    auto env = [](const char* a, const char* b) -> std::string {
      const char* x = std::getenv(a);
      const char* y = std::getenv(b);
      return x && y ? std::string(x) + "/" + y : std::string();
    };
    for (const auto& [a, b] :
         std::vector<std::pair<const char*, const char*>>{{"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT"},
                                                          {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                                          {"PMI_RANK", "PMI_SIZE"},
                                                          {"SLURM_PROCID", "SLURM_NTASKS"}}) {
      t = env(a, b);
      if (!t.empty()) break;
    }
    if (t.empty()) {
      throw UsageError(
          "--shard auto: no launcher environment found (SLURM_ARRAY_TASK_ID/COUNT, "
          "OMPI_COMM_WORLD_RANK/SIZE, "
          "PMI_RANK/SIZE or SLURM_PROCID/NTASKS); give --shard K/N");
    }
  }
  const auto slash = t.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    std::size_t used = 0;
    s.k = std::stoi(t.substr(0, slash), &used);
    if (used != slash) throw std::invalid_argument("trailing");
    s.n = std::stoi(t.substr(slash + 1), &used);
    if (used != t.size() - slash - 1) throw std::invalid_argument("trailing");
  } catch (const std::logic_error&) {
    throw UsageError("--shard '" + text + "': expected K/N, e.g. 3/16, or auto");
  }
  if (s.n < 1 || s.k < 0 || s.k >= s.n)
    throw UsageError("--shard " + t + ": needs 0 <= K < N (shards are numbered from 0)");
  return s;
}

namespace {

/// The program a point runs (its iterations and warmup set), on `topology`; `ngpus` gets the GPU count it
/// reports. Throws as the point would (unknown GPU, a workload that cannot run on these GPUs).
Program point_program(const SweepSpec& spec, const SweepPoint& p, const topo::Topology& topology,
                      int& ngpus) {
  const std::vector<int> gpus = parse_gpu_list(spec.gpus[p.gpus], static_cast<int>(topology.gpus.size()));
  ngpus = static_cast<int>(gpus.size());
  const workloads::WorkloadSpec& spec_w = workloads::find_workload(spec.workloads[p.workload]);
  RowRequest row;
  row.gpus = gpus;
  row.bytes = spec.sizes[p.size];
  row.thread_per_gpu = machine_count(topology, gpus) > 1;  // one process per GPU, as --launch auto
  row.args = workloads::WorkloadArgs::defaults(spec_w, workloads::Side::Simulate);
  Program prog = sim_workload(spec.workloads[p.workload]).program(row);
  if (spec_w.family == workloads::Family::PointToPoint) ngpus = 2;
  prog.iterations = spec.iterations;
  prog.warmup = spec.warmup;
  return prog;
}

/// A point's estimated cost for the progress ETA: the simulator's work grows with the transfers it moves as
/// flows (every send, receive and copy; a collective, computed analytically, counts as one per rank), over
/// every iteration, not with the bytes (point_work, core/progress.hpp).
double work_of(const SweepSpec& spec, std::size_t index, const std::vector<topo::Topology>& topologies) {
  const SweepPoint p = sweep_point(spec, index);
  double transfers = 0;
  try {
    int ngpus = 0;
    const Program prog = point_program(spec, p, topologies[p.topology], ngpus);
    for (const LaunchSpec& l : prog.launches) {
      for (const KernelSpec& k : l.kernels) {
        const double ranks =
            k.every_rank && k.comm >= 0 && static_cast<std::size_t>(k.comm) < prog.comms.size()
                ? static_cast<double>(prog.comms[static_cast<std::size_t>(k.comm)].gpus.size())
                : 1.0;
        transfers += static_cast<double>(k.ops.size()) + (k.collective ? ranks : 0.0);
      }
    }
  } catch (const std::exception&) {  // the point fails when it runs, and says why; here it costs little
  }
  return point_work(transfers, spec.iterations + spec.warmup);
}

std::vector<topo::Topology> load_topologies(const SweepSpec& spec) {
  std::vector<topo::Topology> topologies;
  for (const auto& t : spec.topologies) {
    topo::Diagnostics diag;
    topologies.push_back(topo::load_topology(t, {}, diag));
  }
  return topologies;
}

}  // namespace

std::vector<double> sweep_work(const SweepSpec& spec, const Shard& shard) {
  const std::vector<topo::Topology> topologies = load_topologies(spec);
  std::vector<double> work;
  for (std::size_t i = 0; i < spec.points(); ++i) {
    if (shard.owns(i)) work.push_back(work_of(spec, i, topologies));
  }
  return work;
}

std::vector<SweepRow> run_sweep(const SweepSpec& spec, const Shard& shard, int jobs,
                                const SweepProgress& progress) {
  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < spec.points(); ++i) {
    if (shard.owns(i)) mine.push_back(i);
  }
  // Every input is loaded once up front, so a bad file fails the sweep before any work, with its location.
  std::vector<models::ModelParams> loaded_sets;
  for (const auto& p : spec.params)
    loaded_sets.push_back(p == "default" ? models::ModelParams::defaults() : models::ModelParams::load(p));
  // Topologies are read-only while simulating (routing keeps no state), so the workers share them.
  const std::vector<topo::Topology> topologies = load_topologies(spec);
  // The set each (topology, params) pair runs with: "default" is, as in simulate, the fitted set of the
  // topology's GPU model where there is one (every GPU the same model), else the unfitted defaults.
  std::vector<models::ModelParams> params;
  for (const topo::Topology& t : topologies) {
    const models::ModelParams* fitted = models::ModelParams::fitted_for_gpu(t.gpu_model());
    for (std::size_t k = 0; k < spec.params.size(); ++k) {
      params.push_back(spec.params[k] == "default" && fitted ? *fitted : loaded_sets[k]);
      // As simulate: a fit with no transfer over a network gets the datasheet band across one.
      if (t.fabric) params.back().band = models::network_band(params.back());
    }
  }
  if (progress.start) {
    std::vector<double> work;
    for (std::size_t i : mine) work.push_back(work_of(spec, i, topologies));
    progress.start(work);
  }
  std::vector<SweepRow> rows(mine.size());
  std::atomic<std::size_t> next{0};
  std::mutex progress_mutex;
  auto worker = [&] {
    // Per worker: the inputs of the combination it last ran (points are ordered so that a combination's
    // points are contiguous).
    std::size_t loaded_key = static_cast<std::size_t>(-1);
    Loaded loaded;
    for (std::size_t j = next++; j < mine.size(); j = next++) {
      const SweepPoint p = sweep_point(spec, mine[j]);
      SweepRow& r = rows[j];
      r.index = p.index;
      r.topology = spec.topologies[p.topology];
      r.params = spec.params[p.params];
      r.nccl_env = join(spec.nccl_env[p.nccl_env], " ");
      r.gpus = spec.gpus[p.gpus];
      r.workload = spec.workloads[p.workload];
      r.bytes = spec.sizes[p.size];
      try {
        const std::size_t key =
            (p.topology * spec.params.size() + p.params) * spec.nccl_env.size() + p.nccl_env;
        const topo::Topology& topology = topologies[p.topology];
        const models::ModelParams& set = params[p.topology * spec.params.size() + p.params];
        r.param_set = set.name;
        if (key != loaded_key) {
          loaded.runtime.reset();
          loaded.model =
              models::make_transfer_model("nccl", set, models::NcclEnv::parse(spec.nccl_env[p.nccl_env]));
          loaded.runtime = std::make_unique<Runtime>(topology, *loaded.model);
          loaded_key = key;
        }
        Program prog = point_program(spec, p, topology, r.ngpus);
        const workloads::WorkloadSpec& spec_w = workloads::find_workload(r.workload);
        const RunResult res = loaded.runtime->run(prog, nullptr, {.op_records = 1});  // the first transfer
        r.time_us = static_cast<double>(res.per_iteration) / 1e6;
        const models::Band band = models::band_of(set, r.bytes, r.time_us);
        r.time_us_lo = band.lo_us;
        r.time_us_hi = band.hi_us;
        r.algbw_gbps = r.time_us > 0 ? static_cast<double>(r.bytes) / (r.time_us * 1e3) : 0;
        r.busbw_gbps = r.algbw_gbps * spec_w.busbw_factor(r.ngpus);
        if (!res.collectives.empty()) {
          r.algorithm = models::algorithm_name(res.collectives.front().algorithm);
          r.protocol = models::protocol_name(res.collectives.front().protocol);
        } else if (!res.ops.empty()) {
          r.algorithm = models::transport_name(res.ops.front().transport);
          r.protocol = models::protocol_name(res.ops.front().protocol);
        }
      } catch (const std::exception& e) {
        r.error = e.what();
        loaded_key = static_cast<std::size_t>(-1);
      }
      if (progress.done) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        progress.done(j);
      }
    }
  };
  const int threads =
      std::max(1, std::min<int>(jobs, static_cast<int>(std::max<std::size_t>(mine.size(), 1))));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  return rows;
}

namespace {

std::string csv_text(const std::vector<SweepRow>& rows) {
  CsvWriter w;
  for (const SweepRow& r : rows) {
    w.field(r.index).field(r.topology).field(r.params).field(r.param_set).field(r.nccl_env).field(r.gpus);
    w.field(r.ngpus).field(r.workload).field(r.bytes);
    if (r.error.empty()) {
      w.field(r.time_us).field(r.time_us_lo).field(r.time_us_hi).field(r.algbw_gbps).field(r.busbw_gbps);
    } else {  // a failed point has no time: empty cells, never 0
      w.raw("").raw("").raw("").raw("").raw("");
    }
    w.field(r.algorithm).field(r.protocol).field(r.error.empty() ? "ok" : "failed").field(r.error);
    w.end_row();
  }
  return column_header() + w.str();
}

std::string meta_text(const std::string& name, const std::string& hash, const Shard& shard,
                      std::size_t points, const std::vector<SweepRow>& rows) {
  std::size_t failed = 0;
  for (const SweepRow& r : rows) failed += r.error.empty() ? 0 : 1;
  const nlohmann::json meta = {{"schema", "commsim.sweep_meta/1"},
                               {"name", name},
                               {"hash", hash},
                               {"shard", std::to_string(shard.k) + "/" + std::to_string(shard.n)},
                               {"points", points},
                               {"rows", rows.size()},
                               {"failed", failed},
                               {"columns", columns()}};
  return meta.dump(2) + "\n";
}

/// A number cell of a sweep CSV: empty for a failed point (0 here; its status says it failed).
double number_cell(const std::string& cell) {
  return cell.empty() ? 0.0 : std::stod(cell);
}

}  // namespace

std::string sweep_meta_path(const std::string& csv_path) {
  const fs::path p(csv_path);
  return (p.parent_path() / (p.stem().string() + ".meta.json")).string();
}

std::string sweep_csv(const std::vector<SweepRow>& rows) {
  return csv_text(rows);
}

std::string sweep_meta(const SweepSpec& spec, const Shard& shard, const std::vector<SweepRow>& rows) {
  return meta_text(spec.name, std::to_string(spec.hash), shard, spec.points(), rows);
}

SweepMerged merge_sweep_files(const std::vector<SweepFile>& files, std::vector<SweepRow>& rows) {
  if (files.empty()) throw UsageError("sweep merge: no shard files given");
  SweepMerged merged;
  std::string hash;
  long long points = -1;
  int n = -1;
  std::set<int> shards;
  std::set<std::size_t> seen;
  rows.clear();
  for (const SweepFile& f : files) {
    const std::string& file = f.file;
    nlohmann::json meta;
    try {
      meta = nlohmann::json::parse(f.meta);
    } catch (const nlohmann::json::exception& e) {
      throw InputError({f.meta_file, 1, 1}, std::string("not a commsim sweep metadata file: ") + e.what());
    }
    if (!meta.is_object())
      throw InputError({f.meta_file, 1, 1},
                       "not a commsim sweep metadata file (schema commsim.sweep_meta/1)");
    // Fields of the wrong JSON type are located input errors (the fuzzers' lesson: nlohmann's value()
    // throws).
    auto text_field = [&](const char* key, const std::string& fallback) {
      if (!meta.contains(key)) return fallback;
      if (!meta[key].is_string())
        throw InputError({f.meta_file, 1, 1},
                         std::string("$.") + key + ": expected a string, found " + meta[key].type_name());
      return meta[key].get<std::string>();
    };
    if (text_field("schema", "") != "commsim.sweep_meta/1")
      throw InputError({f.meta_file, 1, 1},
                       "not a commsim sweep metadata file (schema commsim.sweep_meta/1)");
    const std::string shard_text = text_field("shard", "");
    const std::string this_hash = text_field("hash", "");
    int k = 0, nn = 0;
    if (std::sscanf(shard_text.c_str(), "%d/%d", &k, &nn) != 2 || nn < 1 || k < 0 || k >= nn)
      throw InputError({f.meta_file, 1, 1}, "bad shard field '" + shard_text + "'");
    if (n < 0) {
      n = nn;
      hash = this_hash;
      merged.name = text_field("name", "sweep");
      if (meta.contains("points") && !meta["points"].is_number_integer())
        throw InputError({f.meta_file, 1, 1},
                         std::string("$.points: expected an integer, found ") + meta["points"].type_name());
      points = meta.value("points", -1LL);
    }
    if (this_hash != hash)
      throw InputError({file, 1, 1},
                       "comes from a different sweep spec (hash " + this_hash + ", not " + hash + ")");
    if (nn != n)
      throw InputError({file, 1, 1}, "is shard " + shard_text + " of a split into " + std::to_string(nn) +
                                         " shards, not " + std::to_string(n));
    if (!shards.insert(k).second)
      throw InputError({file, 1, 1}, "shard " + std::to_string(k) + " given twice");
    std::istringstream in(f.csv);
    std::string header, line;
    std::getline(in, header);
    if (header + "\n" != column_header()) throw InputError({file, 1, 1}, "unexpected column header");
    int lineno = 1;
    const std::size_t ncols = columns().size();
    while (std::getline(in, line)) {
      ++lineno;
      if (line.empty()) continue;
      const auto c = csv_split(line);
      if (c.size() != ncols)
        throw InputError({file, lineno, 1},
                         "expected " + std::to_string(ncols) + " columns, found " + std::to_string(c.size()));
      SweepRow r;
      try {
        r.index = std::stoull(c[0]);
        r.ngpus = std::stoi(c[6]);
        r.bytes = std::stoull(c[8]);
        r.time_us = number_cell(c[9]);
        r.time_us_lo = number_cell(c[10]);
        r.time_us_hi = number_cell(c[11]);
        r.algbw_gbps = number_cell(c[12]);
        r.busbw_gbps = number_cell(c[13]);
      } catch (const std::logic_error&) {
        throw InputError({file, lineno, 1}, "a number column does not hold a number");
      }
      r.topology = c[1];
      r.params = c[2];
      r.param_set = c[3];
      r.nccl_env = c[4];
      r.gpus = c[5];
      r.workload = c[7];
      r.algorithm = c[14];
      r.protocol = c[15];
      r.error = c[17];
      if (c[16] != (r.error.empty() ? "ok" : "failed"))
        throw InputError({file, lineno, 1}, "status '" + c[16] + "' does not match the error column");
      if (r.index % static_cast<std::size_t>(n) != static_cast<std::size_t>(k))
        throw InputError({file, lineno, 1},
                         "point " + c[0] + " does not belong to shard " + std::to_string(k));
      if (!seen.insert(r.index).second)
        throw InputError({file, lineno, 1}, "point " + c[0] + " appears twice");
      rows.push_back(std::move(r));
    }
  }
  if (static_cast<int>(shards.size()) != n) {
    std::string missing;
    for (int k = 0; k < n; ++k) {
      if (!shards.count(k)) missing += (missing.empty() ? "" : ", ") + std::to_string(k);
    }
    throw UsageError("sweep merge: shard(s) " + missing + " of " + std::to_string(n) + " missing");
  }
  if (static_cast<long long>(rows.size()) != points) {
    throw UsageError("sweep merge: " + std::to_string(rows.size()) + " points found, the spec has " +
                     std::to_string(points) + " (a shard is incomplete)");
  }
  std::sort(rows.begin(), rows.end(), [](const SweepRow& a, const SweepRow& b) { return a.index < b.index; });
  merged.csv = csv_text(rows);
  merged.meta = meta_text(merged.name, hash, Shard{0, 1}, rows.size(), rows);
  return merged;
}

std::string sweep_html(const std::string& title, const std::vector<SweepRow>& rows) {
  std::ostringstream h;
  h << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" << html_escape(title)
    << "</title><style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;font-size:12px}"
       "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}th{background:#eee}"
       "svg{margin:0.5em 1em 1em 0;border:1px solid #ddd}"
    << svg_chart_css() << "</style></head><body>\n<h1>" << html_escape(title) << "</h1>\n<p>" << rows.size()
    << " points. Plots: predicted time against size, log-log, one line per parameter set, NCCL knobs and GPU "
       "set."
       "</p>\n";
  // One chart per (topology, workload).
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::vector<const SweepRow*>>> charts;
  for (const SweepRow& r : rows) {
    if (r.error.empty() && r.time_us > 0)
      charts[{r.topology, r.workload}][r.params + " " + r.nccl_env + " gpus=" + r.gpus].push_back(&r);
  }
  for (const auto& [key, lines] : charts) {
    LogLogChart chart;
    chart.title = key.second + " on " + fs::path(key.first).filename().string();
    chart.x_label = "message size";
    chart.y_label = "time (us)";
    chart.x_ticks = PlotXTicks::Bytes;
    chart.width = 520;
    chart.height = 300;
    chart.legend_below = true;
    std::vector<PlotSeries> series;
    for (const auto& [label, pts] : lines) {
      series.push_back({label, plot_colour(series.size()), {}, true});
      for (const SweepRow* r : pts)
        series.back().points.emplace_back(static_cast<double>(r->bytes), r->time_us);
    }
    h << svg_loglog(chart, series) << "\n";
  }
  h << "<table><tr><th>point</th><th>topology</th><th>params</th><th>param_set</th><th>nccl_env</th>"
       "<th>gpus</th><th>ngpus</th><th>workload</th><th>bytes</th><th>time_us</th><th>time_us_lo</th>"
       "<th>time_us_hi</th><th>algbw_gbps</th><th>busbw_gbps</th><th>algorithm</th><th>protocol</th>"
       "<th>error</th></tr>\n";
  char num[64];
  for (const SweepRow& r : rows) {
    h << "<tr><td>" << r.index << "</td><td>" << html_escape(fs::path(r.topology).filename().string())
      << "</td><td>" << html_escape(r.params) << "</td><td>" << html_escape(r.param_set) << "</td><td>"
      << html_escape(r.nccl_env) << "</td><td>" << html_escape(r.gpus) << "</td><td>" << r.ngpus
      << "</td><td>" << html_escape(r.workload) << "</td><td>" << r.bytes << "</td>";
    for (double v : {r.time_us, r.time_us_lo, r.time_us_hi, r.algbw_gbps, r.busbw_gbps}) {
      std::snprintf(num, sizeof num, "%.4g", v);
      h << "<td>" << (r.error.empty() ? num : "") << "</td>";  // a failed point has no time, never 0
    }
    h << "<td>" << html_escape(r.algorithm) << "</td><td>" << html_escape(r.protocol) << "</td><td>"
      << html_escape(r.error) << "</td></tr>\n";
  }
  h << "</table>\n</body></html>\n";
  return h.str();
}

}  // namespace commsim::sim
