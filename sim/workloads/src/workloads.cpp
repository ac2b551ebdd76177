// Program builders for the p2p, sendrecv and exchange workloads, size sweeps, GPU lists and result tables.
#include "commsim/sim/workloads.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "commsim/core/csv.hpp"
#include "commsim/core/error.hpp"
#include "commsim/core/units.hpp"

namespace commsim::sim {

std::size_t machine_count(const topo::Topology& topology, const std::vector<int>& gpus) {
  std::set<int> nodes;
  for (int g : gpus) nodes.insert(topology.gpus.at(g).node);
  return nodes.size();
}

ExchangeMode parse_exchange_mode(std::string_view name) {
  if (name == "sequential") return ExchangeMode::Sequential;
  if (name == "overlapped") return ExchangeMode::Overlapped;
  if (name == "batched") return ExchangeMode::Batched;
  throw UsageError("unknown --mode '" + std::string(name) +
                   "'; valid modes: sequential, overlapped, batched");
}

const char* exchange_mode_name(ExchangeMode m) {
  switch (m) {
    case ExchangeMode::Sequential:
      return "sequential";
    case ExchangeMode::Overlapped:
      return "overlapped";
    case ExchangeMode::Batched:
      return "batched";
  }
  return "?";
}

OpSpec send(int peer, std::uint64_t bytes) {
  return {OpSpec::Kind::Send, peer, bytes};
}
OpSpec recv(int peer, std::uint64_t bytes) {
  return {OpSpec::Kind::Recv, peer, bytes};
}

Program grouped_program(const std::vector<int>& gpus, std::vector<KernelSpec> kernels, bool thread_per_gpu) {
  Program p;
  p.comms.push_back({gpus});
  p.mean_over_threads = true;  // timed as nccl-tests and commsim-measure time it
  if (thread_per_gpu) {
    for (std::size_t r = 0; r < kernels.size(); ++r)
      p.launches.push_back({static_cast<int>(r), {kernels[r]}});
  } else {
    p.launches.push_back({0, std::move(kernels)});
  }
  return p;
}

Program p2p_program(int src, int dst, std::uint64_t bytes) {
  if (src == dst) throw UsageError("--src and --dst are the same GPU");
  Program p;
  p.comms.push_back({{src, dst}});
  p.launches.push_back({0, {p2p_kernel(src, 0, 0, {send(dst, bytes)}, "ncclSend")}});
  p.launches.push_back({1, {p2p_kernel(dst, 0, 0, {recv(src, bytes)}, "ncclRecv")}});
  return p;
}

Program sendrecv_program(const std::vector<int>& gpus, std::uint64_t bytes, bool thread_per_gpu) {
  if (gpus.size() < 2) throw UsageError("sendrecv needs at least 2 GPUs");
  const std::size_t n = gpus.size();
  std::vector<KernelSpec> kernels;
  for (std::size_t r = 0; r < n; ++r) {
    kernels.push_back(p2p_kernel(
        gpus[r], 0, 0, {send(gpus[(r + 1) % n], bytes), recv(gpus[(r + n - 1) % n], bytes)}, "sendrecv"));
  }
  return grouped_program(gpus, std::move(kernels), thread_per_gpu);
}

Program alltoall_program(const std::vector<int>& gpus, std::uint64_t bytes, bool thread_per_gpu) {
  if (gpus.size() < 2) throw UsageError("alltoall needs at least 2 GPUs");
  const std::size_t n = gpus.size();
  const std::uint64_t per_peer = bytes / n;
  std::vector<KernelSpec> kernels;
  for (std::size_t r = 0; r < n; ++r) {
    KernelSpec k = p2p_kernel(gpus[r], 0, 0, {}, "alltoall");
    // nccl-tests (out of place) sends to itself too: a copy inside the GPU that takes channel warps.
    k.ops.push_back({OpSpec::Kind::SelfCopy, gpus[r], per_peer});
    for (std::size_t step = 1; step < n; ++step) {  // NCCL's p2p schedule: peer r+step, from r-step
      k.ops.push_back(send(gpus[(r + step) % n], per_peer));
      k.ops.push_back(recv(gpus[(r + n - step) % n], per_peer));
    }
    kernels.push_back(std::move(k));
  }
  return grouped_program(gpus, std::move(kernels), thread_per_gpu);
}

Program exchange_program(int a, int b, ExchangeMode mode, std::uint64_t bytes) {
  if (a == b) throw UsageError("--pair needs two different GPUs");
  Program p;
  p.comms.push_back({{a, b}});
  switch (mode) {
    case ExchangeMode::Sequential:
      p.launches.push_back({0, {p2p_kernel(a, 0, 0, {send(b, bytes)}, "send")}});
      p.launches.push_back({0, {p2p_kernel(a, 0, 0, {recv(b, bytes)}, "recv")}});
      p.launches.push_back({1, {p2p_kernel(b, 0, 0, {recv(a, bytes)}, "recv")}});
      p.launches.push_back({1, {p2p_kernel(b, 0, 0, {send(a, bytes)}, "send")}});
      break;
    case ExchangeMode::Overlapped:
      p.comms.push_back({{a, b}});
      p.launches.push_back({0, {p2p_kernel(a, 0, 0, {send(b, bytes)}, "send")}});
      p.launches.push_back({0, {p2p_kernel(a, 1, 1, {recv(b, bytes)}, "recv")}});
      p.launches.push_back({1, {p2p_kernel(b, 0, 0, {recv(a, bytes)}, "recv")}});
      p.launches.push_back({1, {p2p_kernel(b, 1, 1, {send(a, bytes)}, "send")}});
      break;
    case ExchangeMode::Batched:
      p.launches.push_back({0, {p2p_kernel(a, 0, 0, {send(b, bytes), recv(b, bytes)}, "batch")}});
      p.launches.push_back({1, {p2p_kernel(b, 0, 0, {recv(a, bytes), send(a, bytes)}, "batch")}});
      break;
  }
  return p;
}

namespace {

/// A cell as the table format prints it (numbers with two decimals).
std::string cell_text(const ResultTable::Cell& c) {
  if (const auto* i = std::get_if<std::int64_t>(&c)) return std::to_string(*i);
  if (const auto* s = std::get_if<std::string>(&c)) return *s;
  if (std::isnan(std::get<double>(c))) return "-";  // no value (a row without a band)
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", std::get<double>(c));
  return buf;
}

}  // namespace

std::string ResultTable::to_csv() const {
  CsvWriter
      w;  // the one CSV writer: RFC 4180 quoting, round-trip numbers; no comment lines (notes: csv_meta)
  for (const auto& c : columns) w.field(c);
  w.end_row();
  for (const auto& row : rows) {
    for (const auto& cell : row) std::visit([&](const auto& v) { w.field(v); }, cell);
    w.end_row();
  }
  return w.str();
}

nlohmann::json ResultTable::csv_meta() const {
  nlohmann::json out = metadata;
  out["schema"] = "commsim.results_meta/2";
  out["tool"] = "commsim";
  out["columns"] = columns;
  out["units"] = units;
  out["notes"] = notes;
  return out;
}

std::string ResultTable::to_table() const {
  std::vector<std::string> head(columns.size());
  std::vector<std::size_t> width(columns.size());
  for (std::size_t i = 0; i < columns.size(); ++i) {
    head[i] = columns[i] + (i < units.size() && !units[i].empty() ? " (" + units[i] + ")" : "");
    width[i] = head[i].size();
  }
  std::vector<std::vector<std::string>> text;
  for (const auto& row : rows) {
    std::vector<std::string> t;
    for (std::size_t i = 0; i < row.size(); ++i) {
      t.push_back(cell_text(row[i]));
      width[i] = std::max(width[i], t.back().size());
    }
    text.push_back(std::move(t));
  }
  std::ostringstream o;
  for (const auto& n : notes) o << "# " << n << "\n";
  for (std::size_t i = 0; i < head.size(); ++i) {
    o << (i ? "  " : "") << std::string(width[i] - head[i].size(), ' ') << head[i];
  }
  o << "\n";
  for (const auto& t : text) {
    for (std::size_t i = 0; i < t.size(); ++i)
      o << (i ? "  " : "") << std::string(width[i] - t[i].size(), ' ') << t[i];
    o << "\n";
  }
  return o.str();
}

nlohmann::json ResultTable::to_json() const {
  nlohmann::json rows_json = nlohmann::json::array();
  for (const auto& row : rows) {
    nlohmann::json r = nlohmann::json::object();
    for (std::size_t i = 0; i < row.size(); ++i) {
      const auto* d = std::get_if<double>(&row[i]);
      if (d && std::isnan(*d)) {
        r[columns[i]] = nullptr;  // no value (a row without a band)
      } else {
        std::visit([&](const auto& v) { r[columns[i]] = v; }, row[i]);
      }
    }
    rows_json.push_back(std::move(r));
  }
  nlohmann::json out = metadata;
  out["schema"] = "commsim.results/2";
  out["tool"] = "commsim";
  out["columns"] = columns;
  nlohmann::json unit_map = nlohmann::json::object();
  for (std::size_t i = 0; i < columns.size() && i < units.size(); ++i) {
    if (!units[i].empty()) unit_map[columns[i]] = units[i];
  }
  out["units"] = std::move(unit_map);
  out["rows"] = std::move(rows_json);
  return out;
}

}  // namespace commsim::sim
