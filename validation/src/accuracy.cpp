// Grouping nccl-tests runs, simulating them, and error statistics.
#include "commsim/validation/accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "commsim/core/error.hpp"
#include "commsim/core/text.hpp"
#include "commsim/sim/workloads.hpp"

#include <nlohmann/json.hpp>

namespace commsim::validation {
namespace {

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

Regime regime_of(std::uint64_t bytes) {
  if (bytes < 256 * 1024) return Regime::Latency;
  if (bytes < 32ULL * 1024 * 1024) return Regime::Transition;
  return Regime::Bandwidth;
}

const char* regime_name(Regime r) {
  switch (r) {
    case Regime::Latency:
      return "latency-bound (<256 KiB)";
    case Regime::Transition:
      return "transition (256 KiB-32 MiB)";
    case Regime::Bandwidth:
      return "bandwidth-bound (>=32 MiB)";
  }
  return "?";
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
  const std::string text = read_file(path);
  GpuMap m;
  int bus_col = -1, index_col = -1;
  for (const Line& l : split_lines(text)) {
    std::vector<std::string> cells;
    std::string cell;
    for (char c : std::string(l.text) + ",") {
      if (c == ',') {
        const auto b = cell.find_first_not_of(' ');
        cells.push_back(b == std::string::npos ? "" : cell.substr(b));
        cell.clear();
      } else {
        cell += c;
      }
    }
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
    const int idx = std::atoi(cells[index_col].c_str());
    if (idx < 0 || idx > 4096) throw InputError({path, l.number, 1}, "bad GPU index");
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
    std::map<std::uint64_t, std::vector<double>> times;
    std::map<std::uint64_t, std::string> source;
  };
  std::vector<Group> groups;
  const int n_gpus = static_cast<int>(runtime.topology().gpus.size());
  for (const NcclTestsRun& r : runs) {
    const std::string where = r.file + ":" + std::to_string(r.line);
    if (r.op != "sendrecv" && r.op != "alltoall") {
      throw InputError({r.file, r.line, 1}, "commsim cannot yet simulate nccl-tests '" + r.op +
                                                "' (supported: sendrecv, alltoall)");
    }
    std::vector<int> gpus;
    for (const NcclTestsDevice& d : r.devices) gpus.push_back(map.gpu_of(d, where));
    if (gpus.empty()) throw InputError({r.file, r.line, 1}, "nccl-tests run lists no devices");
    for (int g : gpus) {
      if (g < 0 || g >= n_gpus) {
        throw InputError({r.file, r.line, 1}, "the run used GPU " + std::to_string(g) +
                                                  " but the topology has " + std::to_string(n_gpus) +
                                                  " GPUs (mismatched topology?)");
      }
    }
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const Group& g) { return g.op == r.op && g.gpus == gpus; });
    if (it == groups.end()) {
      groups.push_back({r.op, gpus, {}, {}});
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
      std::vector<double> v = ts;
      std::sort(v.begin(), v.end());
      const double median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
      if (bytes == 0) continue;  // alltoall's rows of 0 bytes time only the launch
      sim::Program p =
          g.op == "alltoall" ? sim::alltoall_program(g.gpus, bytes) : sim::sendrecv_program(g.gpus, bytes);
      p.iterations = iterations;
      p.warmup = warmup;
      const sim::RunResult res = runtime.run(p);
      Comparison c;
      c.workload = g.op;
      c.gpus = g.gpus;
      c.bytes = bytes;
      c.measured_us = median;
      c.predicted_us = static_cast<double>(res.per_iteration) / 1e6;
      c.runs = static_cast<int>(v.size());
      c.spread = (v.back() - v.front()) / median;
      c.source = g.source.at(bytes);
      out.push_back(c);
    }
  }
  return out;
}

MeasuredRun load_measured(const std::string& dir) {
  MeasuredRun run{dir, dir + "/results.json", {}};
  try {
    run.doc = nlohmann::json::parse(read_file(run.file));
  } catch (const nlohmann::json::exception& e) {
    throw InputError({run.file, 0, 0}, std::string("not a commsim-measure results file: ") + e.what());
  }
  const auto& doc = run.doc;
  if (!doc.contains("schema") || doc["schema"] != "commsim.results/1" || !doc.contains("rows") ||
      !doc.contains("gpus")) {
    throw InputError({run.file, 1, 1},
                     "missing schema, rows or GPU metadata: not a complete commsim-measure output");
  }
  return run;
}

std::vector<Comparison> compare_measured(const std::string& dir, sim::Runtime& runtime, int iterations,
                                         int warmup) {
  return compare_measured(load_measured(dir), runtime, iterations, warmup);
}

std::vector<Comparison> compare_measured(const MeasuredRun& run, sim::Runtime& runtime, int iterations,
                                         int warmup) {
  const std::string& file = run.file;
  const nlohmann::json& doc = run.doc;
  const bool thread_per_gpu = doc.value("launch", "thread-per-gpu") == "thread-per-gpu";
  const int n_gpus = static_cast<int>(runtime.topology().gpus.size());
  if (static_cast<int>(doc["gpus"].size()) > n_gpus) {
    throw InputError({file, 1, 1}, "measured on " + std::to_string(doc["gpus"].size()) +
                                       " GPUs but the topology has " + std::to_string(n_gpus) +
                                       " (mismatched topology?)");
  }
  std::vector<Comparison> out;
  for (const auto& row : doc["rows"]) {
    Comparison c;
    c.workload = row.at("workload").get<std::string>();
    c.bytes = row.at("bytes").get<std::uint64_t>();
    c.measured_us = row.at("median_us").get<double>();
    c.runs = row.at("reps").get<int>();
    c.spread = c.measured_us > 0
                   ? (row.at("max_us").get<double>() - row.at("min_us").get<double>()) / c.measured_us
                   : 0;
    c.mode = row.value("mode", "");
    c.source = file + " config " + std::to_string(row.at("config_id").get<int>());
    if (c.runs == 0) continue;  // every repetition failed: nothing to compare, and the file says so
    sim::Program p;
    if (c.workload == "p2p") {
      c.gpus = {row.at("src").get<int>(), row.at("dst").get<int>()};
    } else {
      c.gpus = row.at("gpus").get<std::vector<int>>();
    }
    for (int g : c.gpus) {
      if (g < 0 || g >= n_gpus)
        throw InputError({file, 0, 0}, "GPU " + std::to_string(g) + " is not in the topology");
    }
    if (c.workload == "p2p") {
      if (!thread_per_gpu)
        throw InputError({file, 0, 0}, "p2p measured with --launch single-thread: not simulated yet");
      p = sim::p2p_program(c.gpus[0], c.gpus[1], c.bytes);
    } else if (c.workload == "sendrecv") {
      c.mode = thread_per_gpu ? "thread-per-gpu" : "single-thread";
      p = sim::sendrecv_program(c.gpus, c.bytes, thread_per_gpu);
    } else if (c.workload == "alltoall") {
      c.mode = thread_per_gpu ? "thread-per-gpu" : "single-thread";
      p = sim::alltoall_program(c.gpus, c.bytes, thread_per_gpu);
    } else if (c.workload == "exchange") {
      if (!thread_per_gpu)
        throw InputError({file, 0, 0}, "exchange measured with --launch single-thread: not simulated yet");
      p = sim::exchange_program(c.gpus[0], c.gpus[1], sim::parse_exchange_mode(c.mode), c.bytes);
    } else {
      throw InputError({file, 0, 0}, "commsim cannot yet simulate measured '" + c.workload +
                                         "' (supported: p2p, sendrecv, alltoall, exchange)");
    }
    p.iterations = iterations;
    p.warmup = warmup;
    c.predicted_us = static_cast<double>(runtime.run(p).per_iteration) / 1e6;
    out.push_back(c);
  }
  if (out.empty()) throw InputError({file, 1, 1}, "no measured rows to compare");
  return out;
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

std::vector<Comparison> in_regime(const std::vector<Comparison>& rows, Regime r) {
  std::vector<Comparison> out;
  for (const auto& c : rows)
    if (regime_of(c.bytes) == r) out.push_back(c);
  return out;
}

}  // namespace commsim::validation
