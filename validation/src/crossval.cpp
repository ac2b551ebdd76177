// Manifests of nccl-tests runs, their rows per machine start, and leave-one-family-out cross-validation.
#include "commsim/validation/crossval.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "commsim/core/csv.hpp"
#include "commsim/core/enum_names.hpp"
#include "commsim/core/error.hpp"
#include "commsim/core/limits.hpp"
#include "commsim/core/text.hpp"
#include "commsim/core/units.hpp"
#include "commsim/models/nccl_env.hpp"
#include "commsim/models/transfer.hpp"
#include "commsim/sim/runtime.hpp"
#include "commsim/sim/workloads.hpp"
#include "commsim/validation/json_reader.hpp"

namespace commsim::validation {
namespace {

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

std::string gpu_text(const std::vector<int>& gpus) {
  return join_ints(gpus, ",");
}

std::string size_text(std::uint64_t bytes) {
  return format_size(bytes);
}

}  // namespace

std::vector<ManifestEntry> load_manifest(const std::string& path) {
  const std::string content = read_file(path);
  const std::string_view text = strip_utf8_bom(content);
  require_text(text, path, "a manifest CSV (file,start,workload,gpus,launch,nccl_env,repeat)");
  const std::string dir = path.find('/') == std::string::npos ? "" : path.substr(0, path.rfind('/') + 1);
  static const std::vector<std::string> kColumns = {"file",   "start",    "workload", "gpus",
                                                    "launch", "nccl_env", "repeat"};
  std::vector<int> col(kColumns.size(), -1);
  std::vector<ManifestEntry> out;
  bool header = false;
  for (const Line& l : split_lines(text)) {
    if (l.text.find_first_not_of(" \t") == std::string_view::npos || l.text.front() == '#') continue;
    const SourceLocation at{path, l.number, 1};
    const auto cells = csv_cells(l.text, at);
    if (!header) {
      for (std::size_t i = 0; i < cells.size(); ++i) {
        const auto it = std::find(kColumns.begin(), kColumns.end(), cells[i].text);
        if (it == kColumns.end())
          throw InputError({path, l.number, cells[i].column}, "unknown manifest column '" + cells[i].text +
                                                                  "'; expected " + join(kColumns, ","));
        col[static_cast<std::size_t>(it - kColumns.begin())] = static_cast<int>(i);
      }
      for (std::size_t k = 0; k < kColumns.size(); ++k) {
        if (col[k] < 0) throw InputError(at, "manifest header lacks the column '" + kColumns[k] + "'");
      }
      header = true;
      continue;
    }
    if (cells.size() != kColumns.size()) {
      throw InputError(at, "expected " + std::to_string(kColumns.size()) + " cells, found " +
                               std::to_string(cells.size()) + " (quote GPU lists with commas: \"0,2\")");
    }
    auto cell = [&](const char* name) -> const CsvCell& {
      const auto k = std::find(kColumns.begin(), kColumns.end(), name) - kColumns.begin();
      return cells[static_cast<std::size_t>(col[static_cast<std::size_t>(k)])];
    };
    auto fail = [&](const char* name, const std::string& why) {
      return InputError({path, l.number, cell(name).column}, why);
    };
    ManifestEntry e;
    e.where = at;
    if (cell("file").text.empty()) throw fail("file", "empty file cell");
    e.file = cell("file").text.front() == '/' ? cell("file").text : dir + cell("file").text;
    e.start = cell("start").text;
    if (e.start.empty()) throw fail("start", "empty machine-start id");
    e.workload = cell("workload").text;
    check_nccl_tests_op(e.workload, {path, l.number, cell("workload").column});
    try {
      if (cell("gpus").text == "all") throw UsageError("name the GPUs, e.g. 0-3 or \"0,2\"");
      e.gpus = parse_gpu_list(cell("gpus").text, 1 << 20);
    } catch (const UsageError& err) {
      throw fail("gpus", std::string("bad GPU list '") + cell("gpus").text + "': " + err.what());
    }
    if (e.gpus.size() < 2) throw fail("gpus", "a run needs at least 2 GPUs");
    std::string launch = cell("launch").text;
    e.graph = launch.size() > 6 && launch.substr(launch.size() - 6) == "-graph";
    if (e.graph) launch.resize(launch.size() - 6);
    if (launch != "single-thread" && launch != "thread-per-gpu")
      throw fail(
          "launch",
          "launch must be single-thread (nccl-tests -g N) or thread-per-gpu (-t N), either with -graph "
          "for CUDA graph runs (-G 1), not '" +
              cell("launch").text + "'");
    e.thread_per_gpu = launch == "thread-per-gpu";
    e.nccl_env = split_words(cell("nccl_env").text);
    try {
      models::NcclEnv::parse(e.nccl_env);
    } catch (const UsageError& err) {
      throw fail("nccl_env", err.what());
    }
    const std::string rep = cell("repeat").text;
    const std::optional<std::int64_t> repeat = parse_integer(rep, 1, 1000000);
    if (!repeat || rep.find_first_not_of("0123456789") != std::string::npos)
      throw fail("repeat", "repeat must be a positive integer (at most 1000000), not '" + rep + "'");
    e.repeat = static_cast<int>(*repeat);
    out.push_back(std::move(e));
  }
  if (!header) throw InputError({path, 1, 1}, "empty manifest: no header line");
  if (out.empty()) throw InputError({path, 1, 1}, "manifest lists no runs");
  return out;
}

namespace {

constexpr EnumNames<Family, 7> kFamilies{{{Family::Ring, "ring"},
                                          {Family::Pair, "pair"},
                                          {Family::Knob, "knob"},
                                          {Family::Collective, "collective"},
                                          {Family::Launch, "launch"},
                                          {Family::Start, "start"},
                                          {Family::ProbedStart, "probed-start"}}};

}  // namespace

const std::vector<Family>& all_families() {
  static const std::vector<Family> list = [] {
    std::vector<Family> out;
    for (const auto& [f, name] : kFamilies.entries)
      if (f != Family::ProbedStart) out.push_back(f);
    return out;
  }();
  return list;
}

const char* family_name(Family f) {
  return kFamilies.name(f);
}

Family parse_family(const std::string& name) {
  if (const auto f = kFamilies.find(name)) return *f;
  throw UsageError("unknown family '" + name + "'; valid: " + kFamilies.list());
}

std::string ManifestRow::family_value(Family f, const std::vector<ManifestConfig>& configs) const {
  const ManifestConfig& k = configs[config];
  switch (f) {
    case Family::Ring:
      return std::to_string(k.gpus.size()) + " GPUs";
    case Family::Pair:
      return "gpus " + gpu_text(k.gpus);
    case Family::Knob:
      return k.knob;
    case Family::Collective:
      return k.workload;
    case Family::Launch:
      return std::string(k.thread_per_gpu ? "thread-per-gpu" : "single-thread") + (k.graph ? "-graph" : "");
    case Family::Start:
    case Family::ProbedStart:
      return start;
  }
  return "";
}

ManifestData load_manifest_data(const std::vector<std::string>& manifests, const topo::Topology& topology,
                                const models::ModelParams& params) {
  ManifestData data;
  data.manifests = manifests;
  const int n_gpus = static_cast<int>(topology.gpus.size());
  struct Group {
    std::string start;
    std::size_t config = 0;
    std::map<std::uint64_t, std::vector<double>> times;
    std::map<std::uint64_t, std::string> source;
  };
  std::vector<Group> groups;
  std::set<std::string> warned;
  for (const auto& m : manifests) {
    for (const ManifestEntry& e : load_manifest(m)) {
      const std::string where = e.where.str();
      for (int g : e.gpus) {
        if (g >= n_gpus)
          throw InputError(e.where, "GPU " + std::to_string(g) + " is not in the topology, which has " +
                                        std::to_string(n_gpus) + " GPUs (measured on another machine?)");
      }
      for (const NcclTestsRun& run : parse_nccl_tests(read_file(e.file), e.file)) {
        if (run.op != e.workload)
          throw InputError(e.where, e.file + " ran '" + run.op + "', the manifest says '" + e.workload + "'");
        // A text log's Rank lines count every process's GPUs (mpirun); nccl-tests' JSON lists at most one
        // device a process, so a JSON run of one GPU a process is as many processes as the manifest's GPUs.
        const int per_process = run.nthreads * run.ngpus;
        const int n_listed = static_cast<int>(run.devices.size());
        const bool json = run.version.rfind("json", 0) == 0;
        const int ranks = json && per_process == 1 && n_listed <= 1 ? static_cast<int>(e.gpus.size())
                                                                    : std::max(per_process, n_listed);
        if (ranks != static_cast<int>(e.gpus.size()))
          throw InputError(e.where, e.file + " ran on " + std::to_string(ranks) +
                                        " GPUs, the manifest lists " + std::to_string(e.gpus.size()) + " (" +
                                        gpu_text(e.gpus) + ")");
        if (thread_per_gpu(run, e.gpus.size()) != e.thread_per_gpu)
          throw InputError(e.where, e.file + " ran " + std::to_string(run.nthreads) + " thread(s) x " +
                                        std::to_string(run.ngpus) + " GPU(s), not the manifest's " +
                                        (e.thread_per_gpu ? "thread-per-gpu" : "single-thread") + " launch");
        if ((run.graph > 0) != e.graph)
          throw InputError(e.where,
                           e.file +
                               (run.graph > 0 ? " ran with CUDA graphs (-G " + std::to_string(run.graph) + ")"
                                              : " ran without CUDA graphs") +
                               ", the manifest's launch says " + (e.graph ? "-graph" : "no -graph"));
        for (const NcclTestsDevice& d : run.devices) {
          const auto rank = static_cast<std::size_t>(std::max(0, d.rank));
          if (rank >= e.gpus.size()) continue;
          const int g = e.gpus[rank];
          check_device_model(d.name, topology.gpus[static_cast<std::size_t>(g)].model, g, e.where, e.file);
        }
        if (!run.nccl_version.empty()) data.nccl_versions.insert(run.nccl_version);
        if (const std::string w = nccl_version_warning(run.nccl_version, params.name, params.nccl_version);
            !w.empty() && warned.insert(e.start + run.nccl_version).second) {
          data.warnings.push_back(where + ": machine start " + e.start + " " + w);
        }
        // The knobs the JSON recorded (those commsim models) must be the manifest's.
        std::vector<std::string> recorded;
        for (const auto& kv : run.nccl_env) {
          const std::string key = kv.substr(0, kv.find('='));
          if (key == "NCCL_VERSION" || key == "NCCL_NVLS_ENABLE" || key.rfind("NCCL_DEBUG", 0) == 0) continue;
          recorded.push_back(kv);
        }
        std::vector<std::string> listed = e.nccl_env;
        std::sort(recorded.begin(), recorded.end());
        std::sort(listed.begin(), listed.end());
        if (!run.nccl_env.empty() && recorded != listed)
          data.warnings.push_back(where + ": " + e.file + " recorded the NCCL knobs '" + join(recorded, " ") +
                                  "' but the manifest's nccl_env is '" + join(e.nccl_env, " ") + "'");
        ManifestConfig k{e.workload,
                         e.gpus,
                         e.thread_per_gpu,
                         e.nccl_env,
                         e.nccl_env.empty() ? "defaults" : join(e.nccl_env, " "),
                         e.graph};
        auto kit = std::find_if(data.configs.begin(), data.configs.end(), [&](const ManifestConfig& c) {
          return c.workload == k.workload && c.gpus == k.gpus && c.thread_per_gpu == k.thread_per_gpu &&
                 c.knob == k.knob && c.graph == k.graph;
        });
        if (kit == data.configs.end()) kit = data.configs.insert(data.configs.end(), k);
        const auto config = static_cast<std::size_t>(kit - data.configs.begin());
        auto git = std::find_if(groups.begin(), groups.end(),
                                [&](const Group& g) { return g.start == e.start && g.config == config; });
        if (git == groups.end()) git = groups.insert(groups.end(), Group{e.start, config, {}, {}});
        if (std::find(data.starts.begin(), data.starts.end(), e.start) == data.starts.end())
          data.starts.push_back(e.start);
        for (const NcclTestsRow& r : run.rows) {
          if (r.size == 0) continue;  // rows of 0 bytes time only the launch
          git->times[r.size].push_back(r.time_us);
          git->source.emplace(r.size, e.file + ":" + std::to_string(r.line));
        }
      }
    }
  }
  for (const Group& g : groups) {
    const ManifestConfig& k = data.configs[g.config];
    for (const auto& [bytes, ts] : g.times) {
      ManifestRow row;
      row.start = g.start;
      row.config = g.config;
      row.times = ts;
      Comparison& c = row.c;
      c.workload = k.workload;
      c.gpus = k.gpus;
      std::vector<std::string> mode;
      if (k.thread_per_gpu) mode.emplace_back("thread-per-gpu");
      if (k.graph) mode.emplace_back("cuda-graph");
      if (!k.nccl_env.empty()) mode.push_back(k.knob);
      c.mode = join(mode, " ");
      c.bytes = bytes;
      set_measured(c, ts);
      c.source = g.source.at(bytes);
      data.rows.push_back(std::move(row));
    }
  }
  return data;
}

std::vector<Comparison> predict_rows(const ManifestData& data, const std::vector<std::size_t>& rows,
                                     const topo::Topology& topology, const models::ModelParams& params) {
  struct Engine {
    std::unique_ptr<models::TransferModel> model;
    std::unique_ptr<sim::Runtime> runtime;
  };
  std::map<std::string, Engine> engines;  // one transfer model per set of NCCL knobs
  std::map<std::pair<std::size_t, std::uint64_t>, double> predicted;
  std::vector<Comparison> out;
  out.reserve(rows.size());
  for (std::size_t i : rows) {
    const ManifestRow& row = data.rows[i];
    const ManifestConfig& k = data.configs[row.config];
    auto [it, fresh] = predicted.try_emplace({row.config, row.c.bytes}, 0.0);
    if (fresh) {
      Engine& e = engines[k.knob];
      if (!e.runtime) {
        e.model = models::make_transfer_model("nccl", params, models::NcclEnv::parse(k.nccl_env));
        e.runtime = std::make_unique<sim::Runtime>(topology, *e.model);
      }
      sim::Program p = nccl_tests_program(k.workload, k.gpus, row.c.bytes, k.thread_per_gpu);
      p.iterations = 3;
      p.warmup = 1;
      p.cuda_graph = k.graph;
      it->second = static_cast<double>(e.runtime->run(p).per_iteration) / 1e6;
    }
    out.push_back(row.c);
    out.back().predicted_us = it->second;
  }
  return out;
}

RunSpread run_spread(const ManifestData& data, const std::vector<std::size_t>& rows) {
  std::map<std::pair<std::size_t, std::uint64_t>, std::vector<double>> runs;
  for (std::size_t i : rows) {
    const ManifestRow& r = data.rows[i];
    auto& ts = runs[{r.config, r.c.bytes}];
    ts.insert(ts.end(), r.times.begin(), r.times.end());
  }
  RunSpread s;
  for (const auto& [key, ts] : runs) {
    if (ts.size() < 2) continue;
    const double med = median_of(ts);
    if (!(med > 0)) continue;  // no deviation to measure from
    const int b = static_cast<int>(bound_of(key.second));
    for (double t : ts) {
      s.below[b].push_back(std::max(0.0, 1 - t / med));
      s.above[b].push_back(std::max(0.0, t / med - 1));
    }
  }
  return s;
}

double spread_width(const RunSpread& s, Bound b) {
  const int i = static_cast<int>(b);
  if (s.below[i].empty()) return 0;
  return 100 * (quantile(s.below[i], 0.9) + quantile(s.above[i], 0.9));
}

models::BandParams band_from_held_out(const ManifestData& data, const std::vector<std::size_t>& rows,
                                      const std::vector<Comparison>& held_out,
                                      const models::BandParams& fallback) {
  const RunSpread spread = run_spread(data, rows);
  std::vector<double> error[2];
  for (const Comparison& c : held_out) {
    if (c.measured_us > 0 && c.predicted_us > 0)
      error[static_cast<int>(bound_of(c.bytes))].push_back(
          std::abs(std::log(c.measured_us / c.predicted_us)));
  }
  models::BandParams band = fallback;
  for (int b = 0; b < 2; ++b) {
    if (error[b].empty()) continue;  // no held-out row in this bound: keep the fallback's band
    const double model = quantile(error[b], 0.9);
    // In log space: the spread below as -log(1 - s), above as log(1 + s).
    const double lo_spread = -std::log(1 - std::min(quantile(spread.below[b], 0.9), 0.95));
    const double hi_spread = std::log1p(quantile(spread.above[b], 0.9));
    const double lo = 1 - std::exp(-std::hypot(model, lo_spread));
    const double hi = std::expm1(std::hypot(model, hi_spread));
    // A band of zero width cannot be written (and would claim certainty no measurement has).
    (b == 0 ? band.latency_below : band.bandwidth_below) = std::clamp(lo, 1e-3, 0.95);
    (b == 0 ? band.latency_above : band.bandwidth_above) = std::max(hi, 1e-3);
  }
  return band;
}

models::BandParams band_from_rows(const ManifestData& data, const std::vector<std::size_t>& rows,
                                  const std::vector<Comparison>& fitted, const std::vector<double>& rel_se,
                                  const models::BandParams& fallback, std::string* kept) {
  return band_from_fit(fitted, rel_se, run_spread(data, rows), fallback, kept);
}

CalibrateResult calibrate_manifest(const ManifestData& data, const topo::Topology& topology,
                                   const models::ModelParams& start, const CalibrateOptions& o) {
  std::vector<std::size_t> fitted, held;
  const FitSelection selection(o.workloads);
  for (std::size_t i = 0; i < data.rows.size(); ++i) {
    const bool fit = selection.empty() || selection.selects(data.rows[i].c);
    (fit ? fitted : held).push_back(i);
  }
  CalibrateResult r = fit_rows(
      start, [&](const models::ModelParams& p) { return predict_rows(data, fitted, topology, p); }, o);
  r.params.band = band_from_rows(data, fitted, r.fitted_rows, r.prediction_rel_se, start.band, &r.band_kept);
  r.band_fitted = true;
  keep_start_band(r, start);
  r.held_out_rows = predict_rows(data, held, topology, r.params);
  with_band(r.fitted_rows, r.params);
  with_band(r.held_out_rows, r.params);
  set_fitted_on(r, topology);
  r.nccl_versions = data.nccl_versions;
  return r;
}

CalibrateResult manifest_band(const ManifestData& data, const topo::Topology& topology,
                              const models::ModelParams& start) {
  std::vector<std::size_t> all(data.rows.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  CalibrateResult r;
  r.params = start;
  r.fitted_rows = predict_rows(data, all, topology, start);
  r.params.band = band_from_rows(data, all, r.fitted_rows, {}, start.band, &r.band_kept);
  // A band is all --band-only computes: without repeated runs there is no spread to put in it.
  if (!r.band_kept.empty())
    throw UsageError("no band can be computed " + r.band_kept +
                     ": no configuration there was measured more than once (repeat each configuration, e.g. "
                     "three processes a machine start, or add machine starts)");
  r.band_fitted = true;
  with_band(r.fitted_rows, r.params);
  return r;
}

const std::vector<std::string>& default_cross_validation_parameters() {
  static const std::vector<std::string> list = {"host.launch_per_gpu",
                                                "simple.base_latency",
                                                "simple.channel_bandwidth",
                                                "ll.base_latency",
                                                "ll.channel_bandwidth",
                                                "p2p.nvlink_efficiency",
                                                "collective.ll_base_latency",
                                                "collective.ll128_base_latency",
                                                "collective.simple_base_latency",
                                                "collective.simple_channel_bandwidth",
                                                "collective.ring_recv_step",
                                                "collective.reduce_step",
                                                "collective.ll_channel_bandwidth",
                                                "shm.bandwidth",
                                                "shm.channel_bandwidth",
                                                "p2p.split_rate",
                                                "collective.all_reduce_efficiency",
                                                "collective.reduce_scatter_efficiency",
                                                "collective.broadcast_efficiency",
                                                "collective.reduce_efficiency",
                                                "collective.simple_hop_latency",
                                                "collective.ll_hop_latency",
                                                "simple.fill_bandwidth",
                                                "simple.step_overhead",
                                                "simple.channel_latency",
                                                "p2p.peer_ramp",
                                                "p2p.peer_rate_loss",
                                                "p2p.port_ramp",
                                                "host.launch_base"};
  return list;
}

const std::vector<std::string>& default_probe_parameters() {
  static const std::vector<std::string> list = {"host.launch_per_gpu"};
  return list;
}

namespace {

/// Predicts the rows at positions `at` of `held` with `p` into the same positions of `out`.
void predict_at(const ManifestData& data, const topo::Topology& topology,
                const std::vector<std::size_t>& held, const std::vector<std::size_t>& at,
                const models::ModelParams& p, std::vector<Comparison>& out) {
  std::vector<std::size_t> rows;
  rows.reserve(at.size());
  for (std::size_t k : at) rows.push_back(held[k]);
  std::vector<Comparison> got = predict_rows(data, rows, topology, p);  // one per row, in order
  for (std::size_t n = 0; n < at.size(); ++n) out[at[n]] = std::move(got[n]);
}

/// `o.parameters` refitted from `p` on `rows` (one machine start's training rows). Too few sizes for the
/// parameters comes back degenerate, saying so, as a refit the rows cannot pin down does.
CalibrateResult refit_start(const ManifestData& data, const topo::Topology& topology,
                            const std::vector<std::size_t>& rows, const models::ModelParams& p,
                            const CalibrateOptions& o) {
  try {
    return fit_rows(
        p, [&](const models::ModelParams& q) { return predict_rows(data, rows, topology, q); }, o);
  } catch (const UsageError& e) {
    CalibrateResult r;
    r.degenerate = true;
    r.why_degenerate = e.what();
    return r;
  }
}

/// The held-out rows predicted start by start: each machine start's with `p` refitted (`o.parameters`) on
/// that start's training rows, a fit made once per start and kept in `cache`; a start with no training row,
/// or whose refit is degenerate, is predicted with `p` and says why in `fits`. Rows come back in `held`'s
/// order; `refitted` says, row by row, whether its start's refit predicted it.
std::vector<Comparison> predict_per_start(const ManifestData& data, const topo::Topology& topology,
                                          const std::vector<std::size_t>& train,
                                          const std::vector<std::size_t>& held, const models::ModelParams& p,
                                          const CalibrateOptions& o,
                                          std::map<std::string, CalibrateResult>& cache,
                                          std::vector<Fold::StartFit>& fits, std::vector<bool>& refitted) {
  // By start: the held-out rows' positions in `held`, and the start's training rows.
  std::map<std::string, std::vector<std::size_t>> held_at, train_by;
  for (std::size_t k = 0; k < held.size(); ++k) held_at[data.rows[held[k]].start].push_back(k);
  for (std::size_t i : train)
    if (auto it = held_at.find(data.rows[i].start); it != held_at.end()) train_by[it->first].push_back(i);
  std::vector<Comparison> out(held.size());
  refitted.assign(held.size(), false);
  for (const auto& [start, at] : held_at) {
    Fold::StartFit sf{start, 0, {}, {}};
    models::ModelParams ps = p;
    const auto t = train_by.find(start);
    if (t == train_by.end()) {
      sf.refused = "no training row on this start";
    } else {
      auto c = cache.find(start);
      if (c == cache.end()) c = cache.emplace(start, refit_start(data, topology, t->second, p, o)).first;
      sf.rows = static_cast<int>(t->second.size());
      if (c->second.degenerate) {
        sf.refused = "degenerate refit: " + c->second.why_degenerate;
      } else {
        sf.values = c->second.values;
        ps = c->second.params;
        ps.band = p.band;
      }
    }
    predict_at(data, topology, held, at, ps, out);
    for (std::size_t k : at) refitted[k] = sf.refused.empty();
    fits.push_back(std::move(sf));
  }
  return out;
}

}  // namespace

CrossValidation cross_validate(const ManifestData& data, const topo::Topology& topology,
                               const models::ModelParams& start, const std::vector<Family>& families,
                               const CalibrateOptions& given) {
  CalibrateOptions options = given;
  if (options.parameters.empty()) options.parameters = default_cross_validation_parameters();
  const bool probed = std::find(families.begin(), families.end(), Family::ProbedStart) != families.end();
  if (probed && options.probe.empty())
    throw UsageError(
        "the probed-start family needs probe configurations (validate --probe, e.g. 'sendrecv "
        "gpus 0,1'): the rows each held-out start's host is calibrated on");
  if (!probed && !options.probe.empty())
    throw UsageError(
        "probe configurations (--probe) belong to the probed-start family; add --family "
        "probed-start");
  CalibrateOptions probe_options = options;
  probe_options.parameters =
      options.probe_parameters.empty() ? default_probe_parameters() : options.probe_parameters;
  const FitSelection probe_selection(options.probe);
  CalibrateOptions start_options = options;
  start_options.parameters = options.start_parameters;
  CrossValidation cv;
  cv.rows = static_cast<int>(data.rows.size());
  cv.parameters = fitted_parameter_names(options);
  cv.loss = fit_loss_name(options.loss);
  if (options.loss == FitLoss::SoftL1) {
    std::ostringstream scale;
    scale << options.loss_scale;
    cv.loss += " (linear from " + scale.str() + " sigmas)";
  }
  if (!options.start_parameters.empty()) {
    cv.start_parameters = fitted_parameter_names(start_options);  // an unknown name: UsageError listing them
    for (std::size_t i = 0; i < cv.start_parameters.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (cv.start_parameters[i] == cv.start_parameters[j])
          throw UsageError("--start-param " + cv.start_parameters[i] + " is given twice");
    cv.start_rounds = options.start_rounds;
    if (options.start_rounds == 0 && std::all_of(families.begin(), families.end(), [](Family f) {
          return f == Family::Start || f == Family::ProbedStart;
        }))
      throw UsageError(
          "per-start parameters (--start-param) refit a start's host on its own training rows, which the "
          "start and probed-start families hold out whole; add a family that keeps every start in the fit "
          "(ring, pair, knob, collective or launch), or --start-rounds N to fit their shared parameters "
          "with each training start at its own host");
  }
  if (probed) {
    cv.probe = options.probe;
    cv.probe_parameters = fitted_parameter_names(probe_options);  // an unknown name: UsageError listing them
    if (std::none_of(data.rows.begin(), data.rows.end(),
                     [&](const ManifestRow& r) { return probe_selection.selects(r.c); }))
      throw UsageError(
          "no measured row is a probe (" + join(options.probe, ", ") +
          "): name configurations as validate labels them, e.g. 'sendrecv gpus 0,1' or 'sendrecv "
          "gpus 0,1 thread-per-gpu'");
  }
  // A fold's fit on its training rows, with the parameters it had to keep at the start value.
  struct FoldFit {
    CalibrateResult result;
    std::vector<std::string> kept, unpinned;
    /// CalibrateOptions::start_parameters refitted on each machine start's training rows, by start.
    std::map<std::string, CalibrateResult> per_start;
    int joint_rounds = 0;    ///< joint rounds completed (CalibrateOptions::start_rounds)
    std::string joint_note;  ///< why fewer, or which start kept the shared host in a round
  };
  // Joint rounds (CalibrateOptions::start_rounds) in every fold, the start families' too.
  const bool joint = options.start_rounds > 0 && !start_options.parameters.empty();
  const auto fit_fold = [&](const std::vector<std::size_t>& train) {
    const auto predict = [&](const models::ModelParams& p) { return predict_rows(data, train, topology, p); };
    CalibrateOptions fewer = options;
    // A thread's host cost (host.launch_base) is told from a GPU's (host.launch_per_gpu) only by one thread
    // driving several GPUs (one of the first, N of the second); a thread per GPU pays one of each. Without
    // such a training row (the launch family's single-thread fold) the per-GPU cost keeps its start value and
    // the per-thread one is fitted, as the data cannot say how a thread's cost grows with its GPUs. Until
    // session 40 which of the two such a fold kept was an accident of their standard errors (it flipped
    // between six and seven starts; models/README.md, "A seventh start").
    const std::string per_gpu = "host.launch_per_gpu";
    const auto has = [](const std::vector<std::string>& v, const std::string& n) {
      return std::find(v.begin(), v.end(), n) != v.end();
    };
    const bool separates = std::any_of(train.begin(), train.end(), [&](std::size_t i) {
      const ManifestConfig& c = data.configs[data.rows[i].config];
      return !c.thread_per_gpu && !c.graph && c.gpus.size() > 1;
    });
    std::vector<std::string> unseparated;
    if (!separates && has(fewer.parameters, per_gpu) && has(fewer.parameters, "host.launch_base")) {
      std::erase(fewer.parameters, per_gpu);
      unseparated.push_back(per_gpu);
    }
    FoldFit fit{fit_rows(start, predict, fewer), {}, unseparated, {}, 0, {}};
    CalibrateResult& r = fit.result;
    // Fit once more without `names` (some but not all of the fitted ones): they keep the start set's value.
    const auto refit_without = [&](const std::vector<std::string>& names) {
      if (names.empty() || names.size() >= fewer.parameters.size()) return false;
      std::erase_if(fewer.parameters, [&](const std::string& name) {
        return std::find(names.begin(), names.end(), name) != names.end();
      });
      r = fit_rows(start, predict, fewer);
      return true;
    };
    // Parameters no training row depends on.
    if (const std::vector<std::string> unused = r.unused; r.degenerate && refit_without(unused))
      fit.kept = unused;
    // A parameter the rows barely depend on (a rank-deficient Jacobian along it alone): not pinned down.
    if (const std::vector<std::string> faint = r.barely; r.degenerate && refit_without(faint))
      fit.unpinned.insert(fit.unpinned.end(), faint.begin(), faint.end());
    // Every parameter is seen, but some are not pinned down (their standard error is over the bound): kept,
    // and the rest refitted, until none is left loose (a refit can loosen another one that moved with a kept
    // one).
    while (r.degenerate && std::isfinite(r.condition) && r.condition <= kMaxCondition) {
      const std::vector<std::string> loose = r.unpinned;
      if (!refit_without(loose)) break;
      fit.unpinned.insert(fit.unpinned.end(), loose.begin(), loose.end());
    }
    // Joint: the shared parameters fitted again with every start's training rows predicted under that
    // start's own refit of the per-start parameters (which the shared fit then leaves alone), so that one
    // start's host is not taken for a shared cost; `start_rounds` times.
    if (joint && !r.degenerate) {
      // By start: its training rows' positions in `train`, and the rows themselves.
      struct StartRows {
        std::vector<std::size_t> at, rows;
      };
      std::map<std::string, StartRows> by_start;
      for (std::size_t k = 0; k < train.size(); ++k) {
        StartRows& s = by_start[data.rows[train[k]].start];
        s.at.push_back(k);
        s.rows.push_back(train[k]);
      }
      CalibrateOptions shared = fewer;
      std::erase_if(shared.parameters, [&](const std::string& name) {
        return std::find(start_options.parameters.begin(), start_options.parameters.end(), name) !=
               start_options.parameters.end();
      });
      const auto note = [&](const std::string& what) {
        fit.joint_note += (fit.joint_note.empty() ? "" : "; ") + what;
      };
      if (shared.parameters.empty()) note("no shared parameter left to refit");
      for (int round = 0; round < options.start_rounds && !shared.parameters.empty(); ++round) {
        std::map<std::string, std::vector<FittedValue>> host;
        for (const auto& [s, sr] : by_start) {
          const CalibrateResult h = refit_start(data, topology, sr.rows, r.params, start_options);
          if (h.degenerate)
            note("round " + std::to_string(round + 1) + ": " + s + " kept the shared host (" +
                 h.why_degenerate + ")");
          else
            host[s] = h.values;
        }
        const auto predict_joint = [&](const models::ModelParams& q) {
          std::vector<Comparison> out(train.size());
          for (const auto& [s, sr] : by_start) {
            const auto h = host.find(s);
            std::vector<Comparison> got =
                predict_rows(data, sr.rows, topology, h == host.end() ? q : with_fitted_values(q, h->second));
            for (std::size_t n = 0; n < sr.at.size(); ++n) out[sr.at[n]] = std::move(got[n]);
          }
          return out;
        };
        CalibrateResult next = fit_rows(r.params, predict_joint, shared);
        if (next.degenerate) {
          note("stopped at round " + std::to_string(round + 1) + ", degenerate: " + next.why_degenerate);
          break;
        }
        r = std::move(next);
        ++fit.joint_rounds;
      }
    }
    return fit;
  };
  // Fits by their training rows: folds of different families that hold out the same rows share one.
  std::map<std::vector<std::size_t>, FoldFit> fits;
  for (Family f : families) {
    std::vector<std::string> values;
    for (const auto& r : data.rows) {
      const std::string v = r.family_value(f, data.configs);
      if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
    }
    std::sort(values.begin(), values.end());
    if (values.size() < 2) {
      const std::string why = std::string("family '") + family_name(f) + "' has a single value (" +
                              (values.empty() ? "none" : values.front()) +
                              "): nothing to hold out; add data with another " + family_name(f);
      if (families.size() == 1) throw UsageError("cannot cross-validate: " + why);
      cv.skipped.push_back(why);
      continue;
    }
    // What each fitted fold of this family needs again once all of them have predicted
    // (cross_validated_band).
    struct Fitted {
      std::size_t fold;
      std::vector<std::size_t> train;
      models::ModelParams params;
      /// Per start (start_fits): the held-out rows predicted with the fold's own fit, no start refitted,
      /// and which of the fold's held-out rows a start's refit predicted. Empty otherwise.
      std::vector<Comparison> plain;
      std::vector<bool> refitted;
    };
    std::vector<Fitted> fitted;
    std::vector<std::size_t> family_rows;  // the rows its folds predicted
    for (const std::string& value : values) {
      Fold fold{f, value, 0, {}, {}, {}, {}, {}, {}, false, 0, {}, {}, 0, {}, 0, {}};
      std::vector<std::size_t> train, held;
      for (std::size_t i = 0; i < data.rows.size(); ++i)
        (data.rows[i].family_value(f, data.configs) == value ? held : train).push_back(i);
      fold.fitted_rows = static_cast<int>(train.size());
      try {
        // Another family's fold may have held out the very same rows (a machine start and its probed
        // start; the 4-GPU ring and the 4-GPU pair): its fit is this fold's, made once.
        auto same = fits.find(train);
        if (same == fits.end()) same = fits.emplace(train, fit_fold(train)).first;
        FoldFit& fit = same->second;
        CalibrateResult r = fit.result;
        fold.kept = fit.kept;
        fold.unpinned = fit.unpinned;
        fold.joint_rounds = fit.joint_rounds;
        fold.joint_note = fit.joint_note;
        fold.values = r.values;
        // Probed start: the held-out start's probe rows calibrate its host (from this fold's fit); only its
        // other rows are predicted.
        if (!r.degenerate && f == Family::ProbedStart) {
          std::vector<std::size_t> probe, rest;
          for (std::size_t i : held) (probe_selection.selects(data.rows[i].c) ? probe : rest).push_back(i);
          if (probe.empty() || rest.empty()) {
            fold.refused = "start " + value + " has " +
                           (probe.empty() ? "no probe rows (" + join(options.probe, ", ") +
                                                "): measure the probe on that start, or leave it out"
                                          : "only probe rows (" + join(options.probe, ", ") +
                                                "): nothing else of it to predict");
            cv.folds.push_back(std::move(fold));
            continue;
          }
          const CalibrateResult pr = fit_rows(
              r.params, [&](const models::ModelParams& p) { return predict_rows(data, probe, topology, p); },
              probe_options);
          if (pr.degenerate) {
            fold.refused = "degenerate probe fit on " + std::to_string(probe.size()) + " sizes of start " +
                           value + ": " + pr.why_degenerate;
            cv.folds.push_back(std::move(fold));
            continue;
          }
          fold.probe_rows = static_cast<int>(probe.size());
          fold.probe_values = pr.values;
          fold.fitted_rows += fold.probe_rows;
          r.params = pr.params;
          held = std::move(rest);
        }
        if (r.degenerate) {
          fold.refused =
              "degenerate fit on the other " + std::to_string(train.size()) + " sizes: " + r.why_degenerate;
        } else {
          models::ModelParams p = r.params;
          p.band = band_from_rows(data, train, r.fitted_rows, r.prediction_rel_se, start.band);
          std::vector<Comparison> predicted, plain;
          std::vector<bool> refitted;
          std::vector<Fold::StartFit> start_fits;
          // Never for ProbedStart: its r.params were replaced by the probe's, while fit.per_start is keyed
          // by the training rows alone (the fold's own fit).
          if (!start_options.parameters.empty() && f != Family::Start && f != Family::ProbedStart) {
            predicted = predict_per_start(data, topology, train, held, p, start_options, fit.per_start,
                                          start_fits, refitted);
            // For the other folds' bands (below): the rows a start's refit predicted, as the fold's own fit
            // predicts them; the rest were predicted with it already.
            if (options.cross_validated_band) {
              plain = predicted;
              std::vector<std::size_t> at;
              for (std::size_t k = 0; k < held.size(); ++k)
                if (refitted[k]) at.push_back(k);
              predict_at(data, topology, held, at, p, plain);
            }
          } else {
            predicted = predict_rows(data, held, topology, p);
          }
          fold.held_out = std::move(predicted);
          fold.start_fits = std::move(start_fits);
          fold.start_fallback_rows = static_cast<int>(std::count(refitted.begin(), refitted.end(), false));
          fold.band = p.band;
          fold.start_fallback_band = p.band;
          with_band(fold.held_out, p);
          family_rows.insert(family_rows.end(), held.begin(), held.end());
          fitted.push_back(
              {cv.folds.size(), std::move(train), std::move(p), std::move(plain), std::move(refitted)});
        }
      } catch (const UsageError& e) {
        fold.refused = e.what();
      }
      cv.folds.push_back(std::move(fold));
    }
    // The band from errors made out of sample: each fold's band takes its model error from the held-out rows
    // of the family's other folds (fits that never saw those rows), not from its own fit's residuals, which
    // understate how far a prediction for an unmeasured value can be off.
    if (options.cross_validated_band && fitted.size() > 1) {
      for (Fitted& fi : fitted) {
        // The other folds' held-out rows as predicted (a start's refit where there was one), and as their
        // folds' own fits predict them (no start refitted): the model error of rows with and without their
        // start's host. A row that kept its fold's fit is like the latter: its start was never in a fit.
        // (All of the other folds' rows, not only the ones that kept their fit, which are few or none.)
        std::vector<Comparison> others, others_plain;
        for (const Fitted& fj : fitted) {
          if (fj.fold == fi.fold) continue;
          const auto& h = cv.folds[fj.fold].held_out;
          others.insert(others.end(), h.begin(), h.end());
          const auto& q = fj.plain.empty() ? h : fj.plain;
          others_plain.insert(others_plain.end(), q.begin(), q.end());
        }
        Fold& fold = cv.folds[fi.fold];
        const models::BandParams own = fold.band;
        fi.params.band = band_from_held_out(data, fi.train, others, own);
        fold.band = fi.params.band;
        fold.band_cross_validated = true;
        with_band(fold.held_out, fi.params);
        fold.start_fallback_band = fold.band;
        if (fold.start_fallback_rows > 0) {
          models::ModelParams q = fi.params;
          q.band = band_from_held_out(data, fi.train, others_plain, own);
          fold.start_fallback_band = q.band;
          for (std::size_t k = 0; k < fold.held_out.size(); ++k)
            if (!fi.refitted[k]) with_band(fold.held_out[k], q);
        }
      }
    }
    const RunSpread spread = run_spread(data, family_rows);
    cv.spreads.push_back({f, {spread_width(spread, Bound::Latency), spread_width(spread, Bound::Bandwidth)}});
  }
  if (cv.folds.empty()) {
    std::string why;
    for (const auto& s : cv.skipped) why += (why.empty() ? "" : "; ") + s;
    throw UsageError("cannot cross-validate: every family has a single value (" + why + ")");
  }
  return cv;
}

double CrossValidation::spread_width(Family f, Bound b) const {
  for (const FamilySpread& s : spreads)
    if (s.family == f) return s.width[static_cast<int>(b)];
  return 0;
}

models::BandParams cross_validated_band(const CrossValidation& cv, const ManifestData& data,
                                        const models::BandParams& fallback) {
  std::vector<Comparison> held;
  for (const Fold& fold : cv.folds) {
    // Probed predictions had their start's host measured: a set used without a probe would get too narrow a
    // band from them.
    if (fold.family == Family::ProbedStart) continue;
    // Likewise predictions whose start's host was refitted on its other rows (--start-param).
    if (std::any_of(fold.start_fits.begin(), fold.start_fits.end(),
                    [](const Fold::StartFit& s) { return s.refused.empty(); }))
      continue;
    held.insert(held.end(), fold.held_out.begin(), fold.held_out.end());
  }
  std::vector<std::size_t> all(data.rows.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  return band_from_held_out(data, all, held, fallback);
}

std::vector<Comparison> held_out_rows(const CrossValidation& cv, Family f) {
  std::vector<Comparison> out;
  for (const Fold& fold : cv.folds) {
    if (fold.family == f) out.insert(out.end(), fold.held_out.begin(), fold.held_out.end());
  }
  return out;
}

namespace {

/// The families that were cross-validated, in order.
std::vector<Family> validated_families(const CrossValidation& cv) {
  std::vector<Family> out;
  for (const Fold& f : cv.folds) {
    if (std::find(out.begin(), out.end(), f.family) == out.end()) out.push_back(f.family);
  }
  return out;
}

/// A spread_width as text: "52.7%", or "n/a" where no configuration and size ran twice.
std::string width_text(double width) {
  if (!(width > 0)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", width);
  return buf;
}

/// Calls fn(family, bound, its held-out rows' stats) for each validated family and each bound it has rows in.
template <typename Fn>
void for_each_bound(const CrossValidation& cv, Fn fn) {
  for (Family f : validated_families(cv)) {
    const auto all = held_out_rows(cv, f);
    for (Bound b : {Bound::Latency, Bound::Bandwidth}) {
      const auto sub = in_bound(all, b);
      if (!sub.empty()) fn(f, b, stats(sub));
    }
  }
}

/// MAPE, worst, coverage per bound and overall, as JSON.
nlohmann::json stats_json(const std::vector<Comparison>& rows) {
  nlohmann::json j = nlohmann::json::object();
  auto one = [](const std::vector<Comparison>& rs) {
    const ErrorStats s = stats(rs);
    nlohmann::json o = {{"sizes", s.count},
                        {"mape_pct", s.mape},
                        {"worst_pct", s.worst},
                        {"worst_bytes", s.worst_bytes},
                        {"coverage_pct", s.coverage},
                        {"band_width_pct", s.band_width},
                        {"measured_spread_pct", s.repeated_spread},
                        {"repeated_sizes", s.repeated}};
    return o;
  };
  j["latency"] = one(in_bound(rows, Bound::Latency));
  j["bandwidth"] = one(in_bound(rows, Bound::Bandwidth));
  j["all"] = one(rows);
  return j;
}

/// The worst row: label and size.
std::string worst_text(const std::vector<Comparison>& rows) {
  const Comparison* w = nullptr;
  for (const auto& c : rows) {
    if (!w || std::fabs(c.error()) > std::fabs(w->error())) w = &c;
  }
  if (!w) return "-";
  char buf[256];
  std::snprintf(buf, sizeof buf, "%+.1f%% %s at %s", 100 * w->error(), w->label().c_str(),
                size_text(w->bytes).c_str());
  return buf;
}

std::string pct(const std::vector<Comparison>& rows, double ErrorStats::*field) {
  if (rows.empty()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", stats(rows).*field);
  return buf;
}

/// How the folds' bands were made, in words.
std::string band_source(const CrossValidation& cv) {
  bool any = false, all = true;
  for (const Fold& fold : cv.folds) {
    if (!fold.refused.empty()) continue;
    any = any || fold.band_cross_validated;
    all = all && fold.band_cross_validated;
  }
  if (all && any)
    return "the held-out errors of the family's other folds, symmetric in log space, and the measured spread";
  if (any)
    return "the held-out errors of the family's other folds, symmetric in log space, and the measured "
           "spread; a family with one "
           "fitted fold: that fold's residuals, measured spread and standard errors";
  return "the fold's own residuals, measured spread and standard errors";
}

/// A probed-start fold's probe, in words: "probe: 56 sizes, host.launch_per_gpu 6.83 us".
std::string probe_text(const Fold& fold) {
  if (fold.probe_rows == 0) return "";
  std::string s = "probe: " + std::to_string(fold.probe_rows) + " sizes";
  for (const FittedValue& v : fold.probe_values) {
    char buf[128];
    std::snprintf(buf, sizeof buf, ", %s %.3g%s%s", v.parameter.name.c_str(), v.value,
                  v.parameter.unit.empty() ? "" : " ", v.parameter.unit.c_str());
    s += buf;
  }
  return s;
}

/// A fold's per-start refits, in words: "per start: 6 starts refitted, host.launch_per_gpu 3.39-7.64 us",
/// then any start predicted with the fold's own fit and why.
std::string start_fits_text(const Fold& fold) {
  if (fold.start_fits.empty()) return "";
  struct Range {
    double lo, hi;
    std::string unit;
  };
  std::vector<std::pair<std::string, Range>> ranges;  // by parameter, in fit order
  std::vector<std::string> refused;
  int refit = 0;
  for (const Fold::StartFit& sf : fold.start_fits) {
    if (!sf.refused.empty()) {
      refused.push_back(sf.start + ": " + sf.refused);
      continue;
    }
    ++refit;
    for (const FittedValue& v : sf.values) {
      auto it = std::find_if(ranges.begin(), ranges.end(),
                             [&](const auto& r) { return r.first == v.parameter.name; });
      if (it == ranges.end()) {
        ranges.push_back({v.parameter.name, {v.value, v.value, v.parameter.unit}});
      } else {
        it->second.lo = std::min(it->second.lo, v.value);
        it->second.hi = std::max(it->second.hi, v.value);
      }
    }
  }
  std::string s = "per start: " + std::to_string(refit) + " start" + (refit == 1 ? "" : "s") + " refitted";
  for (const auto& [name, r] : ranges) {
    char buf[160];
    if (r.lo == r.hi)
      std::snprintf(buf, sizeof buf, ", %s %.3g%s%s", name.c_str(), r.lo, r.unit.empty() ? "" : " ",
                    r.unit.c_str());
    else
      std::snprintf(buf, sizeof buf, ", %s %.3g-%.3g%s%s", name.c_str(), r.lo, r.hi,
                    r.unit.empty() ? "" : " ", r.unit.c_str());
    s += buf;
  }
  if (!refused.empty()) s += "; with the fold's own fit: " + join(refused, "; ");
  if (fold.start_fallback_rows > 0 && fold.band_cross_validated) {
    // Rows without their start's host carry the band of predictions made without one.
    const models::BandParams& b = fold.start_fallback_band;
    const models::BandParams& r = fold.band;
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "; those %d sizes' band, from the other folds' predictions with no start refitted: "
                  "-%.1f%%/+%.1f%% below 1 MiB, -%.1f%%/+%.1f%% from 1 MiB (the refitted rows': "
                  "-%.1f%%/+%.1f%%, -%.1f%%/+%.1f%%)",
                  fold.start_fallback_rows, 100 * b.latency_below, 100 * b.latency_above,
                  100 * b.bandwidth_below, 100 * b.bandwidth_above, 100 * r.latency_below,
                  100 * r.latency_above, 100 * r.bandwidth_below, 100 * r.bandwidth_above);
    s += buf;
  }
  return s;
}

}  // namespace

std::string cross_validation_text(const CrossValidation& cv) {
  std::ostringstream o;
  char line[512];
  o << "Leave-one-family-out cross-validation over " << cv.rows << " measured sizes; each fold fits "
    << (cv.parameters.empty() ? std::string("calibrate's default parameters") : join(cv.parameters, ", "))
    << " on the other families' rows"
    << (cv.loss == "squared" ? std::string() : ", minimising a " + cv.loss + " loss,")
    << " and predicts the held-out one (band: " << band_source(cv) << ").\n";
  if (!cv.probe.empty())
    o << "probed-start: each start's fold then refits " << join(cv.probe_parameters, ", ")
      << " on that start's probe rows (" << join(cv.probe, "; ") << "), which are fitted, not predicted.\n";
  if (!cv.start_parameters.empty())
    o << "per start: every fold but start's and probed-start's then refits "
      << join(cv.start_parameters, ", ")
      << " for each machine start on that start's own training rows before predicting its held-out rows; a "
         "start with none keeps the fold's fit, and its rows' band comes from the other folds' rows "
         "predicted "
         "with no start refitted.\n";
  if (cv.start_rounds > 0)
    o << "joint: every fold, start's and probed-start's too, first fits its shared parameters again "
      << cv.start_rounds << (cv.start_rounds == 1 ? " time" : " times")
      << " with every start's training rows predicted under that start's own refit of "
      << join(cv.start_parameters, ", ") << ", which the shared fit then leaves alone.\n";
  for (Family f : validated_families(cv)) {
    o << "\nfamily " << family_name(f) << "\n";
    std::snprintf(line, sizeof line, "  %-34s %6s %6s %9s %9s %9s %9s  %s\n", "held out", "fitted", "sizes",
                  "lat MAPE", "bw MAPE", "all MAPE", "coverage", "worst size");
    o << line;
    for (const Fold& fold : cv.folds) {
      if (fold.family != f) continue;
      if (!fold.refused.empty()) {
        std::snprintf(line, sizeof line, "  %-34s %6d  refused: ", fold.value.c_str(), fold.fitted_rows);
        o << line << fold.refused << "\n";
        continue;
      }
      const auto& h = fold.held_out;
      std::snprintf(line, sizeof line, "  %-34s %6d %6zu %9s %9s %9s %9s  %s\n", fold.value.c_str(),
                    fold.fitted_rows, h.size(), pct(in_bound(h, Bound::Latency), &ErrorStats::mape).c_str(),
                    pct(in_bound(h, Bound::Bandwidth), &ErrorStats::mape).c_str(),
                    pct(h, &ErrorStats::mape).c_str(), pct(h, &ErrorStats::coverage).c_str(),
                    worst_text(h).c_str());
      o << line;
      if (!fold.kept.empty())
        o << "  " << std::string(34, ' ') << "  (kept at the start value: " << join(fold.kept, ", ") << ")\n";
      if (!fold.unpinned.empty())
        o << "  " << std::string(34, ' ')
          << "  (kept at the start value, not pinned down by the other rows: " << join(fold.unpinned, ", ")
          << ")\n";
      if (fold.probe_rows > 0) o << "  " << std::string(34, ' ') << "  (" << probe_text(fold) << ")\n";
      if (!fold.start_fits.empty())
        o << "  " << std::string(34, ' ') << "  (" << start_fits_text(fold) << ")\n";
      if (cv.start_rounds > 0 && (fold.joint_rounds < cv.start_rounds || !fold.joint_note.empty()))
        o << "  " << std::string(34, ' ') << "  (joint: " << fold.joint_rounds << " of " << cv.start_rounds
          << " rounds" << (fold.joint_note.empty() ? "" : "; " + fold.joint_note) << ")\n";
    }
    const auto all = held_out_rows(cv, f);
    std::snprintf(line, sizeof line, "  %-34s %6s %6zu %9s %9s %9s %9s  %s\n", "all held out", "", all.size(),
                  pct(in_bound(all, Bound::Latency), &ErrorStats::mape).c_str(),
                  pct(in_bound(all, Bound::Bandwidth), &ErrorStats::mape).c_str(),
                  pct(all, &ErrorStats::mape).c_str(), pct(all, &ErrorStats::coverage).c_str(),
                  worst_text(all).c_str());
    o << line;
  }
  for (const auto& s : cv.skipped) o << "\nnot cross-validated: " << s << "\n";
  o << "\n";
  for_each_bound(cv, [&](Family f, Bound b, const ErrorStats& s) {
    std::snprintf(line, sizeof line,
                  "held-out %-10s %-26s MAPE %5.1f%%  worst %5.1f%%  coverage %5.1f%%  band %5.1f%% / "
                  "repeats' spread %5.1f%% / runs' 80%% interval %6s\n",
                  family_name(f), bound_name(b), s.mape, s.worst, s.coverage, s.band_width, s.repeated_spread,
                  width_text(cv.spread_width(f, b)).c_str());
    o << line;
  });
  return o.str();
}

std::string cross_validation_markdown(const CrossValidation& cv, const std::string& command) {
  std::ostringstream o;
  o << "## Held-out accuracy (leave one family out)\n\n"
    << "Each fold fits "
    << (cv.parameters.empty() ? std::string("calibrate's default parameters")
                              : markdown_escape(join(cv.parameters, ", ")))
    << " on every other family value"
    << (cv.loss == "squared" ? std::string() : ", minimising a " + markdown_escape(cv.loss) + " loss,")
    << " and predicts the one left out; nothing in a row below was fitted to it"
    << (cv.probe.empty() ? ""
                         : " (probed-start: but for its start's probe rows, which are fitted and not scored)")
    << ". "
    << "Latency-bound: < 1 MiB; bandwidth-bound: >= 1 MiB. Coverage: share of measured medians inside the "
       "prediction band (band: "
    << band_source(cv) << ")."
    << (cv.probe.empty() ? std::string()
                         : " probed-start: each machine start's fold then refits " +
                               markdown_escape(join(cv.probe_parameters, ", ")) +
                               " on that start's own probe rows (" + markdown_escape(join(cv.probe, "; ")) +
                               "), which are fitted and not predicted: a new machine calibrated by a short "
                               "measurement of its host.")
    << (cv.start_parameters.empty()
            ? std::string()
            : " Per start: every fold but start's and probed-start's then refits " +
                  markdown_escape(join(cv.start_parameters, ", ")) +
                  " for each machine start on that start's own training rows (never a held-out row) before "
                  "predicting its held-out rows: the machine's host as it was that day. A start with none "
                  "keeps the fold's fit, and its rows' band comes from the other folds' rows predicted with "
                  "no start refitted.")
    << (cv.start_rounds == 0
            ? std::string()
            : " Joint: every fold, start's and probed-start's too, first fits its shared parameters again " +
                  std::to_string(cv.start_rounds) + (cv.start_rounds == 1 ? " time" : " times") +
                  " with every start's training rows predicted under that start's own refit, "
                  "so that one start's slow host is not taken for a cost every start pays.")
    << " Reproduce with:\n\n"
    << markdown_code_block(command, "sh") << "\n";
  o << "| family | held out | fitted sizes | held-out sizes | latency MAPE | bandwidth MAPE | all MAPE | "
       "coverage | "
       "worst size |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (Family f : validated_families(cv)) {
    for (const Fold& fold : cv.folds) {
      if (fold.family != f) continue;
      if (!fold.refused.empty()) {
        o << "| " << family_name(f) << " | " << markdown_escape(fold.value) << " | " << fold.fitted_rows
          << " | refused: " << markdown_escape(fold.refused) << " | | | | | |\n";
        continue;
      }
      const auto& h = fold.held_out;
      std::string kept = fold.kept.empty() ? "" : " (kept at start: " + join(fold.kept, ", ") + ")";
      if (!fold.unpinned.empty()) kept += " (not pinned, kept at start: " + join(fold.unpinned, ", ") + ")";
      if (fold.probe_rows > 0) kept += " (" + probe_text(fold) + ")";
      if (!fold.start_fits.empty()) kept += " (" + start_fits_text(fold) + ")";
      o << "| " << family_name(f) << " | " << markdown_escape(fold.value + kept) << " | " << fold.fitted_rows
        << " | " << h.size() << " | " << pct(in_bound(h, Bound::Latency), &ErrorStats::mape) << " | "
        << pct(in_bound(h, Bound::Bandwidth), &ErrorStats::mape) << " | " << pct(h, &ErrorStats::mape)
        << " | " << pct(h, &ErrorStats::coverage) << " | " << markdown_escape(worst_text(h)) << " |\n";
    }
    const auto all = held_out_rows(cv, f);
    o << "| **" << family_name(f) << "** | **all** | | " << all.size() << " | **"
      << pct(in_bound(all, Bound::Latency), &ErrorStats::mape) << "** | **"
      << pct(in_bound(all, Bound::Bandwidth), &ErrorStats::mape) << "** | **" << pct(all, &ErrorStats::mape)
      << "** | " << pct(all, &ErrorStats::coverage) << " | " << markdown_escape(worst_text(all)) << " |\n";
  }
  // The bands against what was measured: one start's repeats (max - min) and the runs' 80% interval, every
  // run pooled over the starts that measured a configuration and size (run_spread: what a band adds to the
  // model error).
  o << "\n| family | bound | coverage | band width | repeats' spread | runs' 80% interval (10th-90th "
       "percentile), over starts |\n"
       "| --- | --- | --- | --- | --- | --- |\n";
  for_each_bound(cv, [&](Family f, Bound b, const ErrorStats& s) {
    char cells[160];
    std::snprintf(cells, sizeof cells, "%.1f%% | %.1f%% | %.1f%% | %s", s.coverage, s.band_width,
                  s.repeated_spread, width_text(cv.spread_width(f, b)).c_str());
    o << "| " << family_name(f) << " | " << markdown_escape(bound_name(b)) << " | " << cells << " |\n";
  });
  for (const auto& s : cv.skipped) o << "\nNot cross-validated: " << markdown_escape(s) << ".\n";
  return o.str();
}

nlohmann::json cross_validation_json(const CrossValidation& cv, const std::string& command) {
  nlohmann::json j;
  j["schema"] = "commsim.crossval/1";
  j["command"] = command;
  j["parameters"] = cv.parameters;
  if (cv.loss != "squared") j["loss"] = cv.loss;
  j["rows"] = cv.rows;
  j["skipped"] = cv.skipped;
  if (!cv.probe.empty()) {
    j["probe"] = cv.probe;
    j["probe_parameters"] = cv.probe_parameters;
  }
  if (!cv.start_parameters.empty()) j["start_parameters"] = cv.start_parameters;
  if (cv.start_rounds > 0) j["start_rounds"] = cv.start_rounds;
  j["families"] = nlohmann::json::array();
  for (Family f : validated_families(cv)) {
    nlohmann::json fam;
    fam["family"] = family_name(f);
    fam["folds"] = nlohmann::json::array();
    for (const Fold& fold : cv.folds) {
      if (fold.family != f) continue;
      nlohmann::json fj = {{"held_out", fold.value}, {"fitted_sizes", fold.fitted_rows}};
      if (!fold.refused.empty()) {
        fj["refused"] = fold.refused;
      } else {
        fj["stats"] = stats_json(fold.held_out);
        fj["worst"] = worst_text(fold.held_out);
        for (const auto& v : fold.values) fj["fitted"][v.parameter.name] = v.value;
        if (!fold.kept.empty()) fj["kept"] = fold.kept;
        if (!fold.unpinned.empty()) fj["unpinned"] = fold.unpinned;
        if (fold.probe_rows > 0) {
          fj["probe_sizes"] = fold.probe_rows;
          for (const auto& v : fold.probe_values) fj["probe_fitted"][v.parameter.name] = v.value;
        }
        for (const Fold::StartFit& sf : fold.start_fits) {
          nlohmann::json sj = {{"start", sf.start}, {"fitted_sizes", sf.rows}};
          if (!sf.refused.empty()) sj["refused"] = sf.refused;
          for (const auto& v : sf.values) sj["fitted"][v.parameter.name] = v.value;
          fj["start_fits"].push_back(std::move(sj));
        }
        if (cv.start_rounds > 0) {
          fj["joint_rounds"] = fold.joint_rounds;
          if (!fold.joint_note.empty()) fj["joint_note"] = fold.joint_note;
        }
        const auto band_json = [&](const models::BandParams& b, const char* cross_validated) {
          return nlohmann::json{{"latency_below", b.latency_below},
                                {"latency_above", b.latency_above},
                                {"bandwidth_below", b.bandwidth_below},
                                {"bandwidth_above", b.bandwidth_above},
                                {"source", fold.band_cross_validated ? cross_validated : "own fit"}};
        };
        if (fold.start_fallback_rows > 0) {
          fj["start_fallback"] = {{"sizes", fold.start_fallback_rows},
                                  {"band", band_json(fold.start_fallback_band,
                                                     "other folds' held-out errors with no start refitted")}};
        }
        fj["band"] = band_json(fold.band, "other folds' held-out errors");
      }
      fam["folds"].push_back(std::move(fj));
    }
    const auto all = held_out_rows(cv, f);
    fam["held_out"] = stats_json(all);
    fam["held_out"]["latency"]["runs_interval_pct"] = cv.spread_width(f, Bound::Latency);
    fam["held_out"]["bandwidth"]["runs_interval_pct"] = cv.spread_width(f, Bound::Bandwidth);
    fam["worst"] = worst_text(all);
    j["families"].push_back(std::move(fam));
  }
  return j;
}

std::string cross_validation_csv(const CrossValidation& cv) {
  CsvWriter csv;
  csv.header({"family", "held_out", "workload", "mode", "gpus", "bytes", "measured_us", "predicted_us",
              "predicted_lo_us", "predicted_hi_us", "error_pct", "runs", "spread_pct", "bound", "source"});
  for (const Fold& fold : cv.folds) {
    for (const Comparison& c : fold.held_out) {
      csv.row(family_name(fold.family), fold.value, c.workload, c.mode, join_ints(c.gpus, " "), c.bytes,
              c.measured_us, c.predicted_us, c.predicted_lo_us, c.predicted_hi_us, 100 * c.error(), c.runs,
              100 * c.spread, bound_of(c.bytes) == Bound::Latency ? "latency" : "bandwidth", c.source);
    }
  }
  return csv.str();
}

}  // namespace commsim::validation
