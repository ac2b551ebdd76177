// Grouping nccl-tests runs, simulating them, and error statistics.
#include "commsim/validation/accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>
#include <tuple>

#include "commsim/core/enum_names.hpp"
#include "commsim/core/error.hpp"
#include "commsim/core/limits.hpp"
#include "commsim/core/text.hpp"
#include "commsim/models/hardware.hpp"
#include "commsim/sim/schedules.hpp"
#include "commsim/sim/sim_workload.hpp"
#include "commsim/sim/workloads.hpp"
#include "commsim/validation/json_reader.hpp"
#include "commsim/workloads/registry.hpp"

#include <nlohmann/json.hpp>

namespace commsim::validation {
namespace {

/// runtime.run(p), naming `source` (the file, and its line, whose row is simulated) in an engine backstop
/// error (the event limit, simulated time overflow), which alone would not say which input caused it.
sim::RunResult run_from(sim::Runtime& runtime, const sim::Program& p, const std::string& source) {
  try {
    return runtime.run(p);
  } catch (const ValueError& e) {
    throw ValueError(source + ": simulating this measurement: " + e.what());
  }
}

/// "00000000:00:06.0" and "0000:00:06" both become "00:06".
std::string normalize_bus(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto dot = s.rfind('.');
  if (dot != std::string::npos && s.size() - dot <= 2) s.resize(dot);
  const auto first = s.find(':');
  if (first != std::string::npos && s.find(':', first + 1) != std::string::npos) s = s.substr(first + 1);
  return s;
}

}  // namespace

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (at - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

void set_measured(Comparison& c, const std::vector<double>& times) {
  c.measured_us = median_of(times);
  c.runs = static_cast<int>(times.size());
  const auto [lo, hi] = std::minmax_element(times.begin(), times.end());
  c.min_us = *lo;
  c.max_us = *hi;
  c.spread = (*hi - *lo) / c.measured_us;
}

std::vector<CsvCell> csv_cells(std::string_view line, const SourceLocation& where) {
  std::vector<CsvCell> out;
  CsvCell cell;
  bool quoted = false;
  for (std::size_t i = 0; i <= line.size(); ++i) {
    const char ch = i < line.size() ? line[i] : ',';
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cell.text += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else if (i == line.size()) {
        throw InputError({where.file, where.line, static_cast<int>(i) + 1}, "unterminated quoted cell");
      } else {
        cell.text += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      const auto b = cell.text.find_first_not_of(' ');
      const auto e = cell.text.find_last_not_of(' ');
      cell.text = b == std::string::npos ? "" : cell.text.substr(b, e - b + 1);
      out.push_back(cell);
      cell = CsvCell{"", static_cast<int>(i) + 2};
    } else {
      cell.text += ch;
    }
  }
  return out;
}

Regime regime_of(std::uint64_t bytes) {
  if (bytes < 256 * 1024) return Regime::Latency;
  if (bytes < 32ULL * 1024 * 1024) return Regime::Transition;
  return Regime::Bandwidth;
}

const char* regime_name(Regime r) {
  static constexpr EnumNames<Regime, 3> kNames{{{Regime::Latency, "latency-bound (<256 KiB)"},
                                                {Regime::Transition, "transition (256 KiB-32 MiB)"},
                                                {Regime::Bandwidth, "bandwidth-bound (>=32 MiB)"}}};
  return kNames.name(r);
}

Bound bound_of(std::uint64_t bytes) {
  return bytes < models::kBandRegimeBytes ? Bound::Latency : Bound::Bandwidth;
}

const char* bound_name(Bound b) {
  static constexpr EnumNames<Bound, 2> kNames{
      {{Bound::Latency, "latency-bound (<1 MiB)"}, {Bound::Bandwidth, "bandwidth-bound (>=1 MiB)"}}};
  return kNames.name(b);
}

std::string Comparison::label() const {
  std::string s = workload + (workload == "p2p" ? " " : " gpus ");
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    s += i ? (workload == "p2p" ? "->" : ",") : "";
    s += std::to_string(gpus[i]);
  }
  if (!mode.empty()) s += " " + mode;
  return s;
}

GpuMap GpuMap::from_csv(const std::string& path) {
  const std::string content = read_file(path);
  const std::string_view text = strip_utf8_bom(content);
  require_text(text, path, "a GPU map CSV (nvidia-smi --query-gpu=index,pci.bus_id --format=csv)");
  GpuMap m;
  int bus_col = -1, index_col = -1;
  for (const Line& l : split_lines(text)) {
    std::vector<std::string> cells;
    for (auto& c : csv_cells(l.text, {path, l.number, 1})) cells.push_back(std::move(c.text));
    if (bus_col < 0) {
      for (std::size_t i = 0; i < cells.size(); ++i) {
        if (cells[i].rfind("pci.bus_id", 0) == 0) bus_col = static_cast<int>(i);
        if (cells[i] == "index") index_col = static_cast<int>(i);
      }
      if (bus_col < 0 || index_col < 0)
        throw InputError({path, l.number, 1}, "expected a CSV header with index and pci.bus_id");
      continue;
    }
    if (cells.size() <= static_cast<std::size_t>(std::max(bus_col, index_col))) continue;
    const auto index = parse_integer(cells[static_cast<std::size_t>(index_col)], 0, kMaxGpus - 1);
    if (!index)
      throw InputError({path, l.number, 1}, "bad GPU index '" + cells[static_cast<std::size_t>(index_col)] +
                                                "' (expected 0 to " + std::to_string(kMaxGpus - 1) + ")");
    const int idx = static_cast<int>(*index);
    if (static_cast<std::size_t>(idx) < m.bus_ids.size() && !m.bus_ids[static_cast<std::size_t>(idx)].empty())
      throw InputError({path, l.number, 1}, "GPU index " + std::to_string(idx) + " is listed twice");
    if (m.bus_ids.size() <= static_cast<std::size_t>(idx)) m.bus_ids.resize(idx + 1);
    m.bus_ids[idx] = normalize_bus(cells[bus_col]);
  }
  return m;
}

int GpuMap::gpu_of(const NcclTestsDevice& d, const std::string& where) const {
  if (!bus_ids.empty() && !d.bus_id.empty()) {
    const std::string want = normalize_bus(d.bus_id);
    for (std::size_t i = 0; i < bus_ids.size(); ++i) {
      if (bus_ids[i] == want) return static_cast<int>(i);
    }
    throw InputError({where, 0, 0}, "device with PCI bus id " + d.bus_id + " is not in the GPU map");
  }
  return d.cuda_device;
}

std::vector<Comparison> compare(const std::vector<NcclTestsRun>& runs, sim::Runtime& runtime,
                                const GpuMap& map, int iterations, int warmup) {
  struct Group {
    std::string op;
    std::vector<int> gpus;
    bool thread_per_gpu = false;
    bool graph = false;  ///< nccl-tests -G
    std::map<std::uint64_t, std::vector<double>> times;
    std::map<std::uint64_t, std::string> source;
  };
  std::vector<Group> groups;
  const int n_gpus = static_cast<int>(runtime.topology().gpus.size());
  for (const NcclTestsRun& r : runs) {
    const std::string where = r.file + ":" + std::to_string(r.line);
    check_nccl_tests_op(r.op, {r.file, r.line, 1});
    std::vector<int> gpus;
    for (const NcclTestsDevice& d : r.devices) gpus.push_back(map.gpu_of(d, where));
    if (gpus.empty()) throw InputError({r.file, r.line, 1}, "nccl-tests run lists no devices");
    const std::int64_t per_process = std::int64_t{r.nthreads} * r.ngpus;
    if (static_cast<std::int64_t>(gpus.size()) % per_process != 0) {
      throw InputError({r.file, r.line, 1},
                       "the run lists " + std::to_string(gpus.size()) + " device(s) but ran nThread " +
                           std::to_string(r.nthreads) + " x nGpus " + std::to_string(r.ngpus) +
                           " GPUs per process: commsim cannot tell which GPUs it used (list the run in a "
                           "--manifest, or give its text log)");
    }
    for (int g : gpus) {
      if (g < 0 || g >= n_gpus) {
        throw InputError({r.file, r.line, 1}, "the run used GPU " + std::to_string(g) +
                                                  " but the topology has " + std::to_string(n_gpus) +
                                                  " GPUs (mismatched topology?)");
      }
    }
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      if (std::find(gpus.begin(), gpus.begin() + static_cast<std::ptrdiff_t>(i), gpus[i]) !=
          gpus.begin() + static_cast<std::ptrdiff_t>(i))
        throw InputError({r.file, r.line, 1}, "two ranks of the run map to GPU " + std::to_string(gpus[i]));
    }
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      check_device_model(r.devices[i].name, runtime.topology().gpus[static_cast<std::size_t>(gpus[i])].model,
                         gpus[i], {r.file, r.line, 1}, r.file);
    }
    const bool per_gpu = thread_per_gpu(r, gpus.size());
    const bool graph = r.graph > 0;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.op == r.op && g.gpus == gpus && g.thread_per_gpu == per_gpu && g.graph == graph;
    });
    if (it == groups.end()) {
      groups.push_back({r.op, gpus, per_gpu, graph, {}, {}});
      it = groups.end() - 1;
    }
    for (const NcclTestsRow& row : r.rows) {
      it->times[row.size].push_back(row.time_us);
      it->source.emplace(row.size, r.file + ":" + std::to_string(row.line));
    }
  }
  std::vector<Comparison> out;
  for (const Group& g : groups) {
    for (const auto& [bytes, ts] : g.times) {
      if (bytes == 0) continue;  // rows of 0 bytes time only the launch
      sim::Program p = nccl_tests_program(g.op, g.gpus, bytes, g.thread_per_gpu);
      p.iterations = iterations;
      p.warmup = warmup;
      p.cuda_graph = g.graph;
      const sim::RunResult res = run_from(runtime, p, g.source.at(bytes));
      Comparison c;
      c.workload = g.op;
      c.mode = std::string(g.thread_per_gpu ? "thread-per-gpu" : "") +
               (g.graph ? (g.thread_per_gpu ? " cuda-graph" : "cuda-graph") : "");
      c.gpus = g.gpus;
      c.bytes = bytes;
      set_measured(c, ts);
      c.predicted_us = static_cast<double>(res.per_iteration) / 1e6;
      c.source = g.source.at(bytes);
      out.push_back(c);
    }
  }
  return out;
}

/// nccl-tests runs a workload commsim simulates when its name is a Ring or Collective workload.
bool nccl_tests_op(const workloads::WorkloadSpec& w) {
  return w.family == workloads::Family::Ring || w.family == workloads::Family::Collective;
}

void check_nccl_tests_op(const std::string& op, const SourceLocation& where) {
  const workloads::WorkloadSpec* w = workloads::lookup_workload(op);
  if (w && nccl_tests_op(*w)) return;
  throw InputError(where, "commsim cannot simulate nccl-tests '" + op +
                              "' (supported: " + workloads::workload_names(nccl_tests_op) + ")");
}

sim::Program nccl_tests_program(const std::string& op, const std::vector<int>& gpus, std::uint64_t bytes,
                                bool thread_per_gpu) {
  sim::RowRequest row;
  row.gpus = gpus;
  row.bytes = bytes;
  row.thread_per_gpu = thread_per_gpu;
  row.args = workloads::WorkloadArgs::defaults(workloads::find_workload(op), workloads::Side::Simulate);
  return sim::sim_workload(op).program(row);
}

void check_device_model(const std::string& device_name, const std::string& model, int gpu,
                        const SourceLocation& where, const std::string& file) {
  if (device_name.empty() || model.empty() || models::HardwareCatalog::builtin().same_gpu(device_name, model))
    return;
  throw InputError(where, file + " was measured on '" + device_name + "' but topology GPU " +
                              std::to_string(gpu) + " is " + model +
                              " (another GPU model: use the matching topology)");
}

void with_band(Comparison& c, const models::ModelParams& params) {
  const double exact = std::clamp(c.exact_us, 0.0, c.predicted_us);
  const models::Band b = models::band_of(params, c.bytes, c.predicted_us - exact);
  c.predicted_lo_us = exact + b.lo_us;
  c.predicted_hi_us = exact + b.hi_us;
}

void with_band(std::vector<Comparison>& rows, const models::ModelParams& params) {
  for (Comparison& c : rows) with_band(c, params);
}

namespace {

/// The metadata the reports show (measured_metadata) must have the types they read: GPUs and NVML summaries
/// are objects whose numbers are numbers and whose names are strings.
void check_report_metadata(const JsonValue& doc) {
  auto optional_number = [](const JsonValue& o, const char* key) {
    if (o.has(key) && !o.at(key).raw().is_null()) o.at(key).number(-2147483647.0, 2147483647.0);
  };
  auto optional_text = [](const JsonValue& o, const char* key) {
    if (o.has(key) && !o.at(key).raw().is_null()) o.at(key).text();
  };
  if (doc.has("gpus") && doc.at("gpus").raw().is_array()) {
    for (const JsonValue& g : doc.at("gpus").items(static_cast<std::size_t>(kMaxGpus))) {
      if (!g.is_object())
        g.fail("expected an object describing one GPU, found " + std::string(g.raw().type_name()));
      optional_number(g, "index");
      optional_text(g, "name");
      optional_text(g, "pci_bus_id");
    }
  }
  if (doc.has("nvml_summary") && doc.at("nvml_summary").raw().is_array()) {
    for (const JsonValue& g : doc.at("nvml_summary").items(static_cast<std::size_t>(kMaxGpus))) {
      if (!g.is_object()) g.fail("expected an object, found " + std::string(g.raw().type_name()));
      optional_number(g, "gpu");
      optional_number(g, "throttle_reasons_seen");
      for (const char* key : {"temperature_c", "sm_clock_mhz", "power_w"}) {
        if (!g.has(key)) continue;
        const JsonValue r = g.at(key);
        if (!r.is_object())
          r.fail("expected an object with min and max, found " + std::string(r.raw().type_name()));
        optional_number(r, "min");
        optional_number(r, "max");
      }
    }
  }
  if (doc.has("command_line") && !doc.at("command_line").raw().is_null()) doc.at("command_line").text();
}

/// A commsim-measure weight-sync run: schema commsim.weight_sync/1 (seconds, "metrics"), or
/// commsim.results/2 with workload weight-sync (rows in microseconds).
bool is_weight_sync(const nlohmann::json& doc) {
  if (!doc.is_object() || !doc.contains("schema")) return false;
  if (doc["schema"] == "commsim.weight_sync/1") return true;
  return doc["schema"] == "commsim.results/2" && doc.contains("workload") && doc["workload"] == "weight-sync";
}

}  // namespace

MeasuredRun load_measured(const std::string& dir) {
  return parse_measured(read_file(dir + "/results.json"), dir);
}

MeasuredRun parse_measured(std::string_view text, const std::string& dir) {
  MeasuredRun run{dir, dir + "/results.json", {}};
  run.doc = parse_json_file_text(text, run.file, "commsim-measure results JSON");
  const auto& doc = run.doc;
  if (!doc.is_object()) JsonValue(doc, run.file).fail("expected a commsim-measure results object");
  check_report_metadata(JsonValue(doc, run.file));
  if (is_weight_sync(doc)) {
    if ((!doc.contains("metrics") && !doc.contains("rows")) || !doc.contains("method") ||
        !doc.contains("model"))
      throw InputError({run.file, 1, 1}, "incomplete commsim-measure weight-sync output");
    return run;
  }
  // commsim.results/1 and /2 rows are the same (times in us); /2 renamed metadata fields only.
  if (!doc.contains("schema") ||
      (doc["schema"] != "commsim.results/1" && doc["schema"] != "commsim.results/2") ||
      !doc.contains("rows") || !doc.contains("gpus")) {
    throw InputError({run.file, 1, 1},
                     "missing schema, rows or GPU metadata: not a complete commsim-measure output");
  }
  return run;
}

namespace {

/// --fwd-us/--bwd-us of a pipeline row: from the row, else the document, else the recorded command line.
/// The value written after `flag` on the measured run's command line (its "command_line" field), if any.
std::optional<std::string> command_line_value(const nlohmann::json& doc, const std::string& flag) {
  const std::string cmd = doc.contains("command_line") && doc["command_line"].is_string()
                              ? doc["command_line"].get<std::string>()
                              : std::string();
  const auto at = cmd.find(flag + " ");
  if (at == std::string::npos) return std::nullopt;
  const std::size_t from = at + flag.size() + 1;
  return cmd.substr(from, cmd.find(' ', from) - from);
}

/// The largest compute time a pipeline row may record, in microseconds (as `simulate pipeline --fwd-us`).
constexpr double kMaxComputeUs = 1e9;

double pipeline_flag(const JsonValue& doc, const JsonValue& row, const char* key, const char* flag) {
  if (row.has(key)) return row.at(key).number(0, kMaxComputeUs);
  if (doc.has(key)) return doc.at(key).number(0, kMaxComputeUs);
  const std::optional<std::string> value = command_line_value(doc.raw(), flag);
  if (!value)
    throw InputError({doc.file(), 1, 1}, std::string("pipeline run without ") + key +
                                             " (neither a field nor " + flag + " on its command line)");
  const std::optional<double> v = parse_finite(*value);
  if (!v || *v < 0 || *v > kMaxComputeUs)
    doc.at("command_line")
        .fail(std::string(flag) + " '" + *value + "' is not a compute time in microseconds");
  return *v;
}

/// The workload's own flags that both tools share (Side::Both), as the measured run had them: a field of the
/// row or of the run (flag name without "--", '-' as '_'), else the run's command line, else the default.
/// Values are checked: an Int flag takes a whole number, a Number flag a finite number.
workloads::WorkloadArgs measured_args(const workloads::WorkloadSpec& spec, const JsonValue& doc,
                                      const JsonValue& row) {
  workloads::WorkloadArgs args = workloads::WorkloadArgs::defaults(spec, workloads::Side::Simulate);
  for (const workloads::FlagSpec& f : spec.flags) {
    if (f.side != workloads::Side::Both) continue;
    std::string key = f.name.substr(2);
    std::replace(key.begin(), key.end(), '-', '_');
    using Kind = workloads::FlagSpec::Kind;
    const std::optional<JsonValue> field = row.has(key)   ? row.find(key)
                                           : doc.has(key) ? doc.find(key)
                                                          : std::nullopt;
    if (field && !field->raw().is_string()) {
      if (f.kind == Kind::Int) args.ints[f.name] = static_cast<int>(field->integer(-2147483647, 2147483647));
      if (f.kind == Kind::Number) args.numbers[f.name] = field->number();
      if (f.kind == Kind::Text) args.text[f.name] = field->raw().dump();
      continue;
    }
    std::string value;
    std::string where;
    if (field) {
      value = field->text();
      where = field->path();
    } else if (const std::optional<std::string> given = command_line_value(doc.raw(), f.name)) {
      value = *given;
      where = "$.command_line";
    } else {
      continue;
    }
    auto bad = [&](const char* what) {
      throw InputError({doc.file(), 0, 0}, where + ": " + f.name + " '" + value + "' is not " + what);
    };
    if (f.kind == Kind::Int) {
      const auto v = parse_integer(value, -2147483647, 2147483647);
      if (!v) bad("a whole number");
      args.ints[f.name] = static_cast<int>(*v);
    }
    if (f.kind == Kind::Number) {
      const auto v = parse_finite(value);
      if (!v) bad("a finite number");
      args.numbers[f.name] = *v;
    }
    if (f.kind == Kind::Text) args.text[f.name] = value;
  }
  return args;
}

sim::Program pipeline_of(const std::vector<int>& gpus, std::uint64_t bytes, int microbatches,
                         const std::string& mode, double fwd_us, double bwd_us, sim::Framework framework,
                         int chunks = 1) {
  sim::PipelineSpec spec;
  spec.gpus = gpus;
  spec.microbatches = microbatches;
  spec.activation_bytes = bytes;
  spec.fwd = static_cast<Picoseconds>(std::llround(fwd_us * 1e6));
  spec.bwd = static_cast<Picoseconds>(std::llround(bwd_us * 1e6));
  spec.mode = sim::parse_exchange_mode(mode);
  spec.framework = framework;
  spec.chunks = chunks;
  return sim::pipeline_program(spec);
}

/// The GPU list `v` (a JSON array): each index inside the topology, none twice, at least `min_count`.
std::vector<int> gpu_list(const JsonValue& v, int n_gpus, std::size_t min_count) {
  std::vector<int> out;
  for (const JsonValue& g : v.items(static_cast<std::size_t>(kMaxGpus))) {
    const int x = g.gpu(n_gpus);
    if (std::find(out.begin(), out.end(), x) != out.end())
      g.fail("GPU " + std::to_string(x) + " is listed twice");
    out.push_back(x);
  }
  if (out.size() < min_count)
    v.fail("lists " + std::to_string(out.size()) + " GPU(s); this workload needs at least " +
           std::to_string(min_count));
  return out;
}

/// The model spec named at `v` (a string), or an error at its path.
const workloads::ModelSpec& model_at(const JsonValue& v) {
  const std::string name = v.text();
  try {
    return workloads::model_spec(name);
  } catch (const UsageError& e) {
    v.fail(e.what());
  }
}

/// Each GPU a commsim-measure run lists ("gpus": index and name) against the topology's model: a run from
/// another machine is refused, naming both. Runs that list no GPUs (commsim.weight_sync/1) pass.
void check_measured_gpu_models(const JsonValue& doc, const topo::Topology& topology,
                               const std::string& file) {
  if (!doc.has("gpus") || !doc.at("gpus").raw().is_array()) return;
  const int n_gpus = static_cast<int>(topology.gpus.size());
  for (const JsonValue& g : doc.at("gpus").items(static_cast<std::size_t>(kMaxGpus))) {
    if (!g.is_object() || !g.has("name") || !g.has("index")) continue;
    const int index = static_cast<int>(g.at("index").integer(0, kMaxGpus - 1));
    if (index >= n_gpus) continue;
    check_device_model(g.at("name").text(), topology.gpus[static_cast<std::size_t>(index)].model, index,
                       {file, 1, 1}, file);
  }
}

/// A commsim-measure weight-sync run (commsim.weight_sync/1 or commsim.results/2): total_transfer_time
/// against the simulated push.
std::vector<Comparison> compare_weight_sync(const MeasuredRun& run, sim::Runtime& runtime) {
  const JsonValue doc(run.doc, run.file);
  const int n_gpus = static_cast<int>(runtime.topology().gpus.size());
  check_measured_gpu_models(doc, runtime.topology(), run.file);
  const JsonValue method_at = doc.at("method");
  const std::string method = method_at.text();
  if (method != "broadcast" && method != "p2p-engine")
    method_at.fail("unknown weight-sync method '" + method + "' (known: broadcast, p2p-engine)");
  const workloads::ModelSpec& spec = model_at(doc.at("model"));
  const int from = doc.at("from").gpu(n_gpus);
  const auto to = gpu_list(doc.at("to"), n_gpus, 1);
  if (std::find(to.begin(), to.end(), from) != to.end())
    doc.at("to").fail("lists the sending GPU " + std::to_string(from));
  std::vector<double> totals;
  if (doc.has("metrics")) {  // commsim.weight_sync/1: one object per repetition, seconds
    for (const JsonValue& m : doc.at("metrics").items()) {
      if (m.has("warmup") && m.at("warmup").boolean()) continue;
      const JsonValue t = m.at("total_transfer_time");  // seconds
      totals.push_back(t.number(0, static_cast<double>(kMaxSimulatedTime) / 1e12) * 1e6);
      if (!(totals.back() > 0)) t.fail("time " + t.raw().dump() + " s must be positive");
    }
  } else {  // commsim.results/2: one row per timing and repetition, microseconds
    for (const JsonValue& r : doc.at("rows").items()) {
      if (r.at("timing").text() != "total_transfer_time" || !r.has("rep")) continue;
      if (r.has("warmup") && r.at("warmup").boolean()) continue;
      const JsonValue t = r.at("time_us");
      totals.push_back(t.number(0, static_cast<double>(kMaxSimulatedTime) / 1e6));
      if (!(totals.back() > 0)) t.fail("time " + t.raw().dump() + " us must be positive");
    }
  }
  if (totals.empty()) throw InputError({run.file, 1, 1}, "weight-sync run without timed repetitions");
  sim::Program p;
  Comparison c;
  c.workload = "weight-sync";
  c.gpus = {from};
  c.gpus.insert(c.gpus.end(), to.begin(), to.end());
  const std::uint64_t bucket = doc.has("bucket_bytes") ? doc.at("bucket_bytes").bytes() : 0;
  if (method == "broadcast") {
    p = sim::broadcast_pieces_program(c.gpus, sim::tensor_pieces(spec, bucket));
    c.mode = "broadcast" + (bucket ? " bucket " + format_size(bucket) : std::string());
  } else {
    const int streams = doc.has("streams") ? static_cast<int>(doc.at("streams").integer(1, 1024)) : 4;
    p = sim::copy_engine_program(from, to, sim::tensor_pieces(spec, 0), streams);
    c.mode = "p2p-engine";
  }
  p.warmup = 0;
  p.iterations = 1;
  c.bytes = spec.bytes();
  set_measured(c, totals);
  c.source = run.file;
  c.predicted_us = static_cast<double>(run_from(runtime, p, run.file).per_iteration) / 1e6;
  return {c};
}

}  // namespace

std::vector<Comparison> compare_torch(const std::string& file, sim::Runtime& runtime, int iterations,
                                      int warmup) {
  const nlohmann::json raw = parse_json_file_text(read_file(file), file, "measure/torch results JSON");
  const JsonValue doc(raw, file);
  if (!raw.is_object() || !raw.contains("metadata") || !raw.contains("results"))
    throw InputError({file, 1, 1}, "expected a measure/torch output (metadata and results)");
  const JsonValue meta = doc.at("metadata");
  const std::string tool = meta.has("tool") ? meta.at("tool").text() : "";
  const int n_gpus = static_cast<int>(runtime.topology().gpus.size());
  // The run's GPU model (measure/torch records the first rank's device name) against the topology's.
  if (meta.has("gpu") && meta.at("gpu").raw().is_string() && n_gpus > 0)
    check_device_model(meta.at("gpu").text(), runtime.topology().gpus.front().model, 0, {file, 1, 1}, file);
  std::vector<Comparison> out;
  if (tool.find("pipeline_1f1b") != std::string::npos) {
    const int stages = static_cast<int>(meta.at("stages").integer(1, kMaxGpus));
    if (stages > n_gpus) throw InputError({file, 1, 1}, "measured on more GPUs than the topology has");
    std::vector<int> gpus;
    for (int i = 0; i < stages; ++i) gpus.push_back(i);
    const double fwd = meta.at("fwd_us").number(0, kMaxComputeUs);
    const double bwd = meta.at("bwd_us").number(0, kMaxComputeUs);
    std::map<std::tuple<std::uint64_t, int, std::string>, std::vector<double>> steps;
    for (const JsonValue& r : doc.at("results").items()) {
      const JsonValue mode = r.at("mode");
      try {
        sim::parse_exchange_mode(mode.text());
      } catch (const Error& e) {
        mode.fail(e.what());
      }
      steps[{r.at("activation_bytes").bytes(), static_cast<int>(r.at("microbatches").integer(1, 10000)),
             mode.text()}]
          .push_back(r.at("step_us").positive_time_us());
    }
    for (const auto& [key, ts] : steps) {
      const auto& [bytes, mb, mode] = key;
      sim::Program p = pipeline_of(gpus, bytes, mb, mode, fwd, bwd, sim::Framework::Torch);
      p.iterations = iterations;
      p.warmup = warmup;
      Comparison c;
      c.workload = "pipeline";
      c.mode = mode + " mb " + std::to_string(mb) + " torch";
      c.gpus = gpus;
      c.bytes = bytes;
      set_measured(c, ts);
      c.source = file;
      c.predicted_us = static_cast<double>(run_from(runtime, p, file).per_iteration) / 1e6;
      c.exact_us = sim::pipeline_compute_bound_us(static_cast<int>(gpus.size()), mb, 1, fwd, bwd);
      out.push_back(c);
    }
  } else if (tool.find("weight_sync") != std::string::npos) {
    const workloads::ModelSpec& spec = model_at(meta.at("model"));
    const int ranks = static_cast<int>(meta.at("ranks").integer(2, kMaxGpus));
    if (ranks > n_gpus) throw InputError({file, 1, 1}, "measured on more GPUs than the topology has");
    std::vector<double> totals;
    for (const JsonValue& r : doc.at("results").items()) {
      if (r.has("warmup") && r.at("warmup").boolean()) continue;
      double worst = 0;
      for (const JsonValue& pr : r.at("per_rank").items())
        worst = std::max(
            worst, pr.at("total_transfer_time").number(0, static_cast<double>(kMaxSimulatedTime) / 1e12));
      if (!(worst > 0)) r.at("per_rank").fail("no positive total_transfer_time");
      totals.push_back(worst * 1e6);
    }
    if (totals.empty()) throw InputError({file, 1, 1}, "no timed repetitions");
    std::vector<int> gpus;
    for (int i = 0; i < ranks; ++i) gpus.push_back(i);
    sim::Program p = sim::broadcast_pieces_program(gpus, sim::tensor_pieces(spec, 0), sim::Framework::Torch);
    p.warmup = 0;
    p.iterations = 1;
    Comparison c;
    c.workload = "weight-sync";
    c.mode = "broadcast torch";
    c.gpus = gpus;
    c.bytes = spec.bytes();
    set_measured(c, totals);
    c.source = file;
    c.predicted_us = static_cast<double>(run_from(runtime, p, file).per_iteration) / 1e6;
    out.push_back(c);
  } else {
    throw InputError({file, 1, 1}, "unknown measure/torch tool '" + tool +
                                       "' (known: pipeline_1f1b.py, weight_sync_broadcast.py)");
  }
  return out;
}

std::vector<Comparison> compare_measured(const std::string& dir, sim::Runtime& runtime, int iterations,
                                         int warmup) {
  return compare_measured(load_measured(dir), runtime, iterations, warmup);
}

std::vector<Comparison> compare_measured(const MeasuredRun& run, sim::Runtime& runtime, int iterations,
                                         int warmup) {
  const std::string& file = run.file;
  const JsonValue doc(run.doc, file);
  if (is_weight_sync(run.doc)) return compare_weight_sync(run, runtime);
  std::string launch = "thread-per-gpu";
  if (const auto v = doc.find("launch")) {
    launch = v->text();
    if (launch != "thread-per-gpu" && launch != "single-thread" && launch != "mpi")
      v->fail("unknown launch '" + launch + "' (known: thread-per-gpu, single-thread, mpi)");
  }
  // A rank per process (mpi) has a host thread per GPU, as `simulate --launch thread-per-gpu` says; until
  // session 27 it was simulated as one thread driving every GPU (a 4-GPU all_reduce at 32 B: 25.5 us for the
  // measured 11.1).
  const bool thread_per_gpu = launch != "single-thread";
  // Runs from before --timing existed put a CUDA event between iterations: per-iteration.
  const std::string run_timing = doc.has("timing") ? doc.at("timing").text() : "per-iteration";
  const int n_gpus = static_cast<int>(runtime.topology().gpus.size());
  const auto gpus_meta = doc.at("gpus").items(static_cast<std::size_t>(kMaxGpus));
  if (static_cast<int>(gpus_meta.size()) > n_gpus) {
    throw InputError({file, 1, 1}, "measured on " + std::to_string(gpus_meta.size()) +
                                       " GPUs but the topology has " + std::to_string(n_gpus) +
                                       " (mismatched topology?)");
  }
  check_measured_gpu_models(doc, runtime.topology(), file);
  std::vector<Comparison> out;
  for (const JsonValue& row : doc.at("rows").items()) {
    Comparison c;
    c.workload = row.at("workload").text();
    c.bytes = row.at("bytes").bytes();
    c.runs = static_cast<int>(row.at("reps").integer(0, 1000000000));
    c.mode = row.has("mode") ? row.at("mode").text() : "";
    c.source = file + " config " + std::to_string(row.at("config_id").integer(0, 2147483647));
    c.timing = row.has("timing") ? row.at("timing").text() : "";
    if (c.timing.empty()) c.timing = run_timing;
    if (c.runs == 0) continue;  // every repetition failed: nothing to compare, and the file says so
    c.measured_us = row.at("median_us").positive_time_us();
    c.min_us = row.at("min_us").positive_time_us();
    c.max_us = row.at("max_us").positive_time_us();
    if (c.min_us > c.measured_us * (1 + 1e-9) || c.measured_us > c.max_us * (1 + 1e-9))
      row.fail("min_us <= median_us <= max_us does not hold (" + row.at("min_us").raw().dump() + ", " +
               row.at("median_us").raw().dump() + ", " + row.at("max_us").raw().dump() + ")");
    c.spread = (c.max_us - c.min_us) / c.measured_us;
    const workloads::WorkloadSpec* spec = workloads::lookup_workload(c.workload);
    if (!spec || !sim::sim_workload(c.workload).program) {
      row.at("workload")
          .fail("commsim cannot simulate measured '" + c.workload +
                "' (supported: " + workloads::workload_names([](const workloads::WorkloadSpec& w) {
                  return w.measured || w.family == workloads::Family::ModelPush;
                }) +
                ")");
    }
    const workloads::Family family = spec->family;
    if (family == workloads::Family::PointToPoint) {
      c.gpus = {row.at("src").gpu(n_gpus), row.at("dst").gpu(n_gpus)};
      if (c.gpus[0] == c.gpus[1]) row.at("dst").fail("src and dst are the same GPU");
    } else {
      const std::size_t need = family == workloads::Family::Pair       ? 2
                               : family == workloads::Family::Pipeline ? 2
                                                                       : 1;
      c.gpus = gpu_list(row.at("gpus"), n_gpus, need);
      if (family == workloads::Family::Pair && c.gpus.size() != 2)
        row.at("gpus").fail(c.workload + " runs between exactly 2 GPUs, found " +
                            std::to_string(c.gpus.size()));
    }
    // Point-to-point and pair workloads are simulated with one host thread per GPU only.
    if (!thread_per_gpu && (family == workloads::Family::PointToPoint || family == workloads::Family::Pair))
      throw InputError({file, 0, 0}, c.workload + " measured with --launch single-thread: not simulated yet");
    sim::RowRequest req;
    req.gpus = c.gpus;
    req.bytes = c.bytes;
    req.thread_per_gpu = thread_per_gpu;
    req.mode = c.mode;
    req.args = measured_args(*spec, doc, row);
    if (family == workloads::Family::Ring || family == workloads::Family::Collective) {
      c.mode = thread_per_gpu ? "thread-per-gpu" : "single-thread";
    } else if (family == workloads::Family::Pipeline) {
      req.microbatches = static_cast<int>(row.at("microbatches").integer(1, 10000));
      req.chunks = row.has("chunks") ? static_cast<int>(row.at("chunks").integer(1, 1000)) : 1;
      req.fwd = seconds_to_picoseconds(pipeline_flag(doc, row, "fwd_us", "--fwd-us") / 1e6, "fwd_us");
      req.bwd = seconds_to_picoseconds(pipeline_flag(doc, row, "bwd_us", "--bwd-us") / 1e6, "bwd_us");
      c.mode += " mb " + std::to_string(req.microbatches) +
                (req.chunks > 1 ? " v" + std::to_string(req.chunks) : "") + " nccl";
      c.exact_us = sim::pipeline_compute_bound_us(static_cast<int>(c.gpus.size()), req.microbatches,
                                                  req.chunks, static_cast<double>(req.fwd) / 1e6,
                                                  static_cast<double>(req.bwd) / 1e6);
    }
    if ((family == workloads::Family::Pair || family == workloads::Family::Pipeline) && row.has("mode")) {
      try {
        sim::parse_exchange_mode(row.at("mode").text());
      } catch (const UsageError& e) {
        row.at("mode").fail(e.what());  // located at $.rows[i].mode: bad input (exit 3), not usage
      }
    }
    sim::Program p;
    try {
      p = sim::sim_workload(c.workload).program(req);
    } catch (const UsageError& e) {
      row.fail(e.what());  // a measured value the workload refuses (a bad flag value)
    }
    p.iterations = iterations;
    p.warmup = warmup;
    try {
      c.predicted_us = static_cast<double>(runtime.run(p).per_iteration) / 1e6;
    } catch (const ValueError& e) {
      row.fail(std::string("simulating this row: ") + e.what());  // file and JSON path
    }
    // commsim predicts nccl-tests' pipelined time (pipeline steps: one step from its launch). A timing event
    // between iterations adds its GPU time to each; an operation timed alone adds launch and completion
    // latencies that are not modelled, so such rows are refused rather than compared.
    const bool step = family == workloads::Family::Pipeline;
    if (c.timing == "per-iteration") {
      c.predicted_us += static_cast<double>(runtime.model().timing_event_time()) / 1e6;
    } else if (c.timing != (step ? "per-op" : "pipelined")) {
      throw InputError({file, 0, 0}, c.workload + " measured with --timing " + c.timing +
                                         ": commsim predicts " + (step ? "per-op" : "pipelined") +
                                         " (or per-iteration) times; measure again with --timing " +
                                         (step ? "per-op" : "pipelined"));
    }
    out.push_back(c);
  }
  if (out.empty()) throw InputError({file, 1, 1}, "no measured rows to compare");
  return out;
}

std::optional<TimelinePair> pipeline_timeline(const MeasuredRun& run, sim::Runtime& runtime) {
  const JsonValue doc(run.doc, run.file);
  if (!run.doc.is_object() || !run.doc.contains("rows")) return std::nullopt;
  const int n_gpus = static_cast<int>(runtime.topology().gpus.size());
  for (const JsonValue& row : doc.at("rows").items()) {
    if (!row.has("workload") || row.at("workload").text() != "pipeline" || !row.has("timeline")) continue;
    TimelinePair t;
    const auto gpus = gpu_list(row.at("gpus"), n_gpus, 2);
    const int mb = static_cast<int>(row.at("microbatches").integer(1, 10000));
    const int chunks = row.has("chunks") ? static_cast<int>(row.at("chunks").integer(1, 1000)) : 1;
    const std::string mode = row.at("mode").text();
    const std::uint64_t bytes = row.at("bytes").bytes();
    t.label = "pipeline gpus ";
    for (std::size_t i = 0; i < gpus.size(); ++i) t.label += (i ? "," : "") + std::to_string(gpus[i]);
    t.label += " " + mode + " mb " + std::to_string(mb) + (chunks > 1 ? " v" + std::to_string(chunks) : "") +
               " nccl, " + format_size(bytes) + " activations";
    t.measured_step_us = row.at("median_us").positive_time_us();
    for (const JsonValue& rank : row.at("timeline").items(gpus.size())) {
      std::vector<TimelineSpan> spans;
      for (const JsonValue& sp : rank.items())
        spans.push_back({sp.at("kind").text(), sp.at("start_us").number(), sp.at("end_us").number()});
      t.measured.push_back(std::move(spans));
    }
    const double fwd = pipeline_flag(doc, row, "fwd_us", "--fwd-us");
    const double bwd = pipeline_flag(doc, row, "bwd_us", "--bwd-us");
    sim::Program p;
    try {
      p = pipeline_of(gpus, bytes, mb, mode, fwd, bwd, sim::Framework::Nccl, chunks);
    } catch (const UsageError& e) {
      row.fail(e.what());
    }
    p.warmup = 1;
    p.iterations = 1;
    const sim::RunResult r = run_from(runtime, p, run.file);
    t.simulated_step_us = static_cast<double>(r.per_iteration) / 1e6;
    t.simulated.assign(gpus.size(), {});
    for (const sim::ComputeSpan& c : r.compute) {
      const auto at = std::find(gpus.begin(), gpus.end(), c.gpu) - gpus.begin();
      if (at >= static_cast<std::ptrdiff_t>(gpus.size())) continue;
      const auto it = r.iteration_start.find(c.gpu);
      const Picoseconds origin = it == r.iteration_start.end() ? 0 : it->second;
      t.simulated[static_cast<std::size_t>(at)].push_back(
          {c.name, static_cast<double>(c.start - origin) / 1e6, static_cast<double>(c.end - origin) / 1e6});
    }
    return t;
  }
  return std::nullopt;
}

ErrorStats stats(const std::vector<Comparison>& rows) {
  ErrorStats s;
  double sum = 0;
  for (const Comparison& c : rows) {
    const double e = std::fabs(c.error()) * 100;
    sum += e;
    if (e > s.worst) {
      s.worst = e;
      s.worst_bytes = c.bytes;
    }
  }
  s.count = static_cast<int>(rows.size());
  s.mape = rows.empty() ? 0 : sum / static_cast<double>(rows.size());
  double spread = 0;
  for (const Comparison& c : rows) spread += c.spread;
  s.spread = rows.empty() ? 0 : 100 * spread / static_cast<double>(rows.size());
  double repeated = 0;
  for (const Comparison& c : rows) {
    if (c.runs < 2) continue;
    ++s.repeated;
    repeated += c.spread;
  }
  s.repeated_spread = s.repeated ? 100 * repeated / s.repeated : 0;
  double inside = 0, width = 0;
  for (const Comparison& c : rows) {
    if (!c.has_band()) continue;
    ++s.banded;
    inside += c.in_band() ? 1 : 0;
    width += (c.predicted_hi_us - c.predicted_lo_us) / c.predicted_us;
  }
  if (s.banded > 0) {
    s.coverage = 100 * inside / s.banded;
    s.band_width = 100 * width / s.banded;
  }
  return s;
}

std::map<std::string, std::vector<Comparison>> group_by_label(const std::vector<Comparison>& rows) {
  std::map<std::string, std::vector<Comparison>> out;
  for (const auto& c : rows) out[c.label()].push_back(c);
  for (auto& [label, cs] : out) {
    std::stable_sort(cs.begin(), cs.end(), [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  }
  return out;
}

std::map<std::string, std::vector<Comparison>> group_by_workload(const std::vector<Comparison>& rows) {
  std::map<std::string, std::vector<Comparison>> out;
  for (const auto& c : rows) out[c.workload].push_back(c);
  return out;
}

std::vector<Comparison> in_bound(const std::vector<Comparison>& rows, Bound b) {
  std::vector<Comparison> out;
  for (const auto& c : rows)
    if (bound_of(c.bytes) == b) out.push_back(c);
  return out;
}

std::vector<Comparison> in_regime(const std::vector<Comparison>& rows, Regime r) {
  std::vector<Comparison> out;
  for (const auto& c : rows)
    if (regime_of(c.bytes) == r) out.push_back(c);
  return out;
}

}  // namespace commsim::validation
