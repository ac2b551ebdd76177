// The simulator's workload lookup and the helpers its workload files share (rows, launch, ring and collective
// sweeps).
#include "commsim/sim/sim_workload.hpp"

#include <algorithm>
#include <cstdio>

#include "commsim/core/args.hpp"
#include "commsim/core/error.hpp"
#include "commsim/models/transfer.hpp"

namespace commsim::sim {

/// Generated from the file names in workloads/sim/ (sim/workloads/CMakeLists.txt): one entry per file.
std::vector<const SimWorkload*> sim_workload_files();

const std::vector<const SimWorkload*>& sim_workloads() {
  static const std::vector<const SimWorkload*> ordered = [] {
    std::vector<const SimWorkload*> files = sim_workload_files();
    std::vector<const SimWorkload*> out;
    for (const workloads::WorkloadSpec& spec : workloads::registry()) {
      for (const SimWorkload* w : files) {
        if (w->name == spec.name) out.push_back(w);
      }
    }
    // Files for names the registry does not know go last, so that the registry test can name them.
    for (const SimWorkload* w : files) {
      if (!workloads::lookup_workload(w->name)) out.push_back(w);
    }
    return out;
  }();
  return ordered;
}

const SimWorkload& sim_workload(std::string_view name) {
  for (const SimWorkload* w : sim_workloads()) {
    if (w->name == name) return *w;
  }
  std::string valid;
  for (const SimWorkload* w : sim_workloads()) valid += (valid.empty() ? "" : ", ") + w->name;
  throw UsageError("unknown workload '" + std::string(name) + "'; the simulator runs: " + valid);
}

bool thread_per_gpu(const std::string& launch, const topo::Topology& topology, const std::vector<int>& gpus) {
  const std::size_t machines = machine_count(topology, gpus);
  if (launch == "single-thread" && machines > 1) {
    throw UsageError("--launch single-thread: one host thread cannot drive GPUs on " +
                     std::to_string(machines) +
                     " machines; use --launch thread-per-gpu (one process per GPU, as under mpirun) or auto");
  }
  return launch == "thread-per-gpu" || (launch == "auto" && machines > 1);
}

std::string describe_setup(Runtime& rt, const std::string& path, const std::vector<int>& gpus,
                           const std::vector<std::string>& nccl_env) {
  const topo::Topology& t = rt.topology();
  const models::NcclEnv env = models::NcclEnv::parse(nccl_env);
  std::vector<int> nodes;
  for (int g : gpus) {
    const int node = t.gpus.at(static_cast<std::size_t>(g)).node;
    if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
  }
  std::string out = path + ": " + std::to_string(gpus.size()) + " GPU(s) on " + std::to_string(nodes.size()) +
                    (nodes.size() == 1 ? " machine" : " machines");
  // Inside a machine: the transport between the first two GPUs of --gpus that share one.
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    std::size_t j = i + 1;
    while (j < gpus.size() && t.gpus.at(static_cast<std::size_t>(gpus[j])).node !=
                                  t.gpus.at(static_cast<std::size_t>(gpus[i])).node)
      ++j;
    if (j >= gpus.size()) continue;
    const models::PairInfo& p = rt.pair(gpus[i], gpus[j]);
    const models::Transport tr = rt.model().transport(p);
    char buf[160];
    if (tr == models::Transport::P2p && p.path == models::PathType::Nvl) {
      std::snprintf(buf, sizeof buf, "; inside a machine P2P over NVLink (%d links, %.0f GB/s per direction)",
                    p.nvlinks, p.route_bandwidth / 1e9);
    } else {
      std::snprintf(buf, sizeof buf, "; inside a machine %s over %s (%.0f GB/s per direction)",
                    models::transport_name(tr), models::path_type_name(p.path), p.route_bandwidth / 1e9);
    }
    out += buf;
    break;
  }
  if (nodes.size() > 1) {
    if (!t.fabric) {
      out += "; machines joined without a fabric description";
    } else {
      const topo::NodeInfo& node = t.nodes.at(static_cast<std::size_t>(nodes[0]));
      double nic_bw = 0;
      for (int n : node.nics) nic_bw = std::max(nic_bw, t.nics.at(static_cast<std::size_t>(n)).bandwidth);
      const bool tcp = t.fabric->kind == topo::FabricKind::Tcp || env.ib_disable;
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "; between machines: %s fabric, %zu NIC(s) per machine at %.0f Gb/s, NET/%s",
                    topo::kind_name(t.fabric->kind), node.nics.size(), nic_bw * 8 / 1e9,
                    tcp ? (env.ib_disable && t.fabric->kind != topo::FabricKind::Tcp
                               ? "Socket (TCP over the same NICs: NCCL_IB_DISABLE=1)"
                               : "Socket (TCP)")
                        : "IB (verbs)");
      out += buf;
    }
  }
  if (!nccl_env.empty()) {
    out += "; knobs";
    for (const std::string& k : nccl_env) out += " " + k;
  }
  return out;
}

void add_transfer_row(ResultTable& table, std::vector<ResultTable::Cell> prefix, std::uint64_t bytes,
                      const RunResult& r, std::vector<ResultTable::Cell> middle) {
  const double t_us = static_cast<double>(r.per_iteration) / 1e6;
  const double algbw = t_us > 0 ? static_cast<double>(bytes) / (t_us * 1e3) : 0.0;
  const OpRecord op = r.ops.empty() ? OpRecord{} : r.ops.front();
  std::vector<ResultTable::Cell> row = std::move(prefix);
  row.emplace_back(static_cast<std::int64_t>(bytes));
  row.emplace_back(t_us);
  row.emplace_back(algbw);
  row.emplace_back(algbw);
  row.insert(row.end(), middle.begin(), middle.end());
  row.emplace_back(std::in_place_type<std::string>, models::transport_name(op.transport));
  row.emplace_back(std::in_place_type<std::string>, models::protocol_name(op.protocol));
  row.emplace_back(std::in_place_type<std::int64_t>, op.channels);
  table.rows.push_back(std::move(row));  // busbw = algbw for point-to-point workloads
}

namespace {

/// The columns and units of a size sweep over --gpus, and the GPUs and launch in the metadata.
std::vector<int> start_sweep(const SimContext& ctx, const WorkloadArgs& args, ResultTable& table,
                             std::string_view name, bool& per_gpu) {
  const std::vector<int> gpus =
      parse_gpu_list(args.str("--gpus"), static_cast<int>(ctx.topology.gpus.size()));
  per_gpu = thread_per_gpu(args.str("--launch"), ctx.topology, gpus);
  table.columns = workloads::find_workload(name).columns;
  table.units = {"B", "us", "GB/s", "GB/s", "", "", "", ""};
  table.metadata["gpus"] = gpus;
  table.metadata["launch"] = per_gpu ? "thread-per-gpu" : "single-thread";
  table.metadata["cuda_graph"] = args.str("--cuda-graph") == "on";
  return gpus;
}

}  // namespace

namespace {

/// A size sweep over --gpus: the columns, units and metadata, then `emit(row, busbw factor)` for every size,
/// with progress. Rows carry every flag, the root and the framework; each workload's program takes what it
/// needs.
template <typename Emit>
void sweep_sizes(const SimContext& ctx, const WorkloadArgs& args, ResultTable& table, Emit emit) {
  bool per_gpu = false;
  const std::vector<int> gpus = start_sweep(ctx, args, table, ctx.workload, per_gpu);
  const double factor = workloads::find_workload(ctx.workload).busbw_factor(static_cast<int>(gpus.size()));
  ctx.progress_start(ctx.sizes.size());
  for (std::uint64_t bytes : ctx.sizes) {
    RowRequest row;
    row.gpus = gpus;
    row.bytes = bytes;
    row.root = args.integer("--root");
    row.thread_per_gpu = per_gpu;
    row.cuda_graph = args.str("--cuda-graph") == "on";
    row.framework = ctx.framework;
    row.args = args;
    emit(row, factor);
    ctx.progress_step();
  }
}

}  // namespace

void simulate_ring(const SimContext& ctx, const WorkloadArgs& args, ResultTable& table,
                   Program (*program)(const RowRequest&)) {
  sweep_sizes(ctx, args, table, [&](const RowRequest& row, double factor) {
    Program p = program(row);
    p.cuda_graph = row.cuda_graph;
    p.transfer_busy = false;  // a row reports times, not GPU busy time
    add_transfer_row(table, {}, row.bytes, ctx.run(std::move(p)),
                     {static_cast<std::int64_t>(row.gpus.size())});
    auto& cells = table.rows.back();
    cells[3] = std::get<double>(cells[2]) * factor;
  });
}

Program collective_row_program(models::CollOp op, const RowRequest& row) {
  return collective_program(row.gpus, op, row.bytes, row.root, row.thread_per_gpu, row.framework);
}

void simulate_collective(const SimContext& ctx, const WorkloadArgs& args, ResultTable& table,
                         models::CollOp op) {
  table.metadata["root"] = args.integer("--root");
  sweep_sizes(ctx, args, table, [&](const RowRequest& row, double factor) {
    Program p = collective_row_program(op, row);
    p.cuda_graph = row.cuda_graph;
    p.transfer_busy = false;  // a row reports times, not GPU busy time
    const RunResult r = ctx.run(std::move(p));
    const double t_us = static_cast<double>(r.per_iteration) / 1e6;
    const double algbw = t_us > 0 ? static_cast<double>(row.bytes) / (t_us * 1e3) : 0.0;
    const CollectiveRecord c = r.collectives.empty() ? CollectiveRecord{} : r.collectives.front();
    table.rows.push_back({static_cast<std::int64_t>(row.bytes), t_us, algbw, algbw * factor,
                          static_cast<std::int64_t>(row.gpus.size()),
                          std::string(models::algorithm_name(c.algorithm)),
                          std::string(models::protocol_name(c.protocol)), std::int64_t{c.channels}});
  });
}

std::uint64_t bucket_flag(const WorkloadArgs& args, std::uint64_t fallback) {
  const std::string& b = args.str("--bucket-bytes");
  if (b.empty()) return fallback;
  if (b == "0" || b == "0B") return 0;
  return parse_size_flag("--bucket-bytes", b);
}

}  // namespace commsim::sim
