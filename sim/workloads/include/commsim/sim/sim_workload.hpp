// The simulator's side of a workload: how `commsim simulate <name>` runs it, and how one row (swept or
// measured) becomes a program. One file per workload in workloads/sim/, found by the registry's names.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "commsim/models/params.hpp"
#include "commsim/models/transfer.hpp"
#include "commsim/sim/runtime.hpp"
#include "commsim/sim/schedules.hpp"
#include "commsim/sim/workloads.hpp"
#include "commsim/workloads/registry.hpp"

namespace commsim::sim {

using WorkloadArgs = workloads::WorkloadArgs;

/// What `commsim simulate` hands a workload: the loaded setup, the sizes, and how to run programs.
struct SimContext {
  std::string workload;  ///< the registry name being simulated
  const topo::Topology& topology;
  const models::ModelParams& params;
  Runtime& runtime;
  std::string topology_path;          ///< --topology as given
  std::vector<std::string> nccl_env;  ///< --nccl-env as given
  std::vector<std::uint64_t> sizes;   ///< --min-bytes .. --max-bytes by --factor, in bytes
  Framework framework = Framework::Nccl;
  std::string framework_name;  ///< --framework as given
  int iterations = 1;          ///< --iterations
  int warmup = 0;              ///< --warmup
  /// Runs a program with --iterations/--warmup and the framework's per-call overhead applied.
  std::function<RunResult(Program)> run;
  /// Runs a program exactly as built (its own iterations and warmup).
  std::function<RunResult(Program)> run_raw;
  /// Progress over `total` runs on a terminal; `step` after each.
  std::function<void(std::size_t total)> progress_start;
  std::function<void()> progress_step;
  /// Loads another setup (topology file, --nccl-env knobs on top of these) and runs `body` on its runtime.
  std::function<void(const std::string& topology, const std::vector<std::string>& nccl_env,
                     const std::function<void(Runtime&)>& body)>
      with_setup;
};

/// One row to rebuild as a program (a sweep point, or a measured row being validated).
struct RowRequest {
  std::vector<int> gpus;    ///< rank order (p2p: src, dst; exchange: the pair)
  std::uint64_t bytes = 0;  ///< the row's size (WorkloadSpec::size says what it means)
  bool thread_per_gpu = false;
  bool cuda_graph = false;  ///< --cuda-graph on: the timed iterations from one captured CUDA graph
  int root = 0;             ///< root rank (index into gpus)
  std::string mode;         ///< exchange or pipeline P2P mode
  Framework framework = Framework::Nccl;
  int microbatches = 0;  ///< pipeline
  int chunks = 1;        ///< pipeline: model chunks per stage
  Picoseconds fwd = 0;   ///< pipeline: forward compute per stage and microbatch
  Picoseconds bwd = 0;
  WorkloadArgs args;  ///< the workload's own flags (defaults where the row does not say)
};

/// The simulator's side of one workload.
struct SimWorkload {
  std::string name;  ///< the registry's name
  /// `commsim simulate <name>`: fills the table's columns, units, rows and metadata.
  void (*simulate)(const SimContext& ctx, const WorkloadArgs& args, ResultTable& table) = nullptr;
  /// The program of one row; nullptr where rows are not rebuilt one by one (model pushes, gradient sync).
  Program (*program)(const RowRequest& row) = nullptr;
};

/// Every workload the simulator runs (one per file in workloads/sim/), in the registry's order.
const std::vector<const SimWorkload*>& sim_workloads();
/// The workload called `name`; UsageError listing the valid names otherwise.
const SimWorkload& sim_workload(std::string_view name);

/// --launch: auto is one host thread for all GPUs (nccl-tests -g N) inside one machine, and one process per
/// GPU (mpirun -np N) across machines, where one thread cannot drive them all. Throws UsageError for
/// single-thread across machines.
bool thread_per_gpu(const std::string& launch, const topo::Topology& topology, const std::vector<int>& gpus);

/// A transfer row: prefix cells, bytes, time and bandwidths (busbw = algbw), the workload's own cells, then
/// how NCCL moved the data (transport, protocol, channels).
void add_transfer_row(ResultTable& table, std::vector<ResultTable::Cell> prefix, std::uint64_t bytes,
                      const RunResult& r, std::vector<ResultTable::Cell> middle);

/// A size sweep over --gpus for a Ring workload (`program(gpus, bytes, thread_per_gpu)`), rows as nccl-tests.
void simulate_ring(const SimContext& ctx, const WorkloadArgs& args, ResultTable& table,
                   Program (*program)(const RowRequest&));
/// A size sweep of one collective over --gpus (rooted at --root), rows as nccl-tests.
void simulate_collective(const SimContext& ctx, const WorkloadArgs& args, ResultTable& table,
                         models::CollOp op);
/// The program of one collective row.
Program collective_row_program(models::CollOp op, const RowRequest& row);

/// The simulator's side of a Ring workload whose program is `Build(gpus, bytes, thread_per_gpu)`.
template <Program (*Build)(const std::vector<int>&, std::uint64_t, bool)>
const SimWorkload& ring_workload(const char* name) {
  static const SimWorkload w{
      name,
      [](const SimContext& ctx, const WorkloadArgs& args, ResultTable& table) {
        simulate_ring(ctx, args, table,
                      [](const RowRequest& row) { return Build(row.gpus, row.bytes, row.thread_per_gpu); });
      },
      [](const RowRequest& row) { return Build(row.gpus, row.bytes, row.thread_per_gpu); }};
  return w;
}

/// The simulator's side of the collective `Op` (nccl-tests <op>_perf as NCCL's tuner runs it).
template <models::CollOp Op>
const SimWorkload& collective_workload() {
  static const SimWorkload w{models::coll_op_name(Op),
                             [](const SimContext& ctx, const WorkloadArgs& args, ResultTable& table) {
                               simulate_collective(ctx, args, table, Op);
                             },
                             [](const RowRequest& row) { return collective_row_program(Op, row); }};
  return w;
}

/// One line naming what a run compares: the topology file, machines x GPUs, how the GPUs of a machine reach
/// each other (NCCL's transport between the first two of `gpus` on one machine) and, across machines, the
/// fabric, the NICs per machine with their speed and NCCL's NET transport (IB verbs, or TCP sockets under a
/// TCP fabric or NCCL_IB_DISABLE=1 in `nccl_env`). Comparison outputs print one for each side.
std::string describe_setup(Runtime& rt, const std::string& path, const std::vector<int>& gpus,
                           const std::vector<std::string>& nccl_env);

/// --bucket-bytes: "" -> fallback, "0"/"0B" -> 0 (per tensor), else a size with a unit.
std::uint64_t bucket_flag(const WorkloadArgs& args, std::uint64_t fallback);

}  // namespace commsim::sim
