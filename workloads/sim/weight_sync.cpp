// weight-sync on the simulator's side: an RL weight push by NCCL broadcast or copy engines, in RL frameworks'
// timings.
#include <algorithm>

#include "commsim/core/args.hpp"
#include "commsim/core/error.hpp"
#include "commsim/sim/sim_workload.hpp"
#include "commsim/workloads/model_spec.hpp"

namespace commsim::sim {
namespace {

using Timings = std::vector<std::pair<std::string, double>>;  ///< name, seconds

double seconds(Picoseconds ps) {
  return static_cast<double>(ps) / 1e12;
}

/// One push by NCCL broadcast per piece: enqueue (broadcast_time) and the rest until the last byte.
Timings broadcast_push(const SimContext& ctx, const WorkloadArgs& args, const workloads::ModelSpec& spec,
                       const std::vector<std::vector<int>>& groups, std::int64_t& pieces_count) {
  const auto pieces = tensor_pieces(spec, bucket_flag(args, 0));
  pieces_count = static_cast<std::int64_t>(pieces.size() * groups.size());
  // Groups that span machines are driven by one process per GPU (a host thread cannot reach another machine).
  bool spans = false;
  for (const auto& g : groups) spans = spans || machine_count(ctx.topology, g) > 1;
  Program p = broadcast_pieces_program(groups, pieces, ctx.framework, spans);
  p.warmup = 0;  // one push from idle GPUs: total_transfer_time runs from the first call to the last byte
  p.iterations = 1;
  p.transfer_busy = false;  // not reported
  const RunResult r = ctx.run_raw(std::move(p));
  const Picoseconds push = r.per_iteration;
  // Host enqueue time of one push: what the trainers' loops spend issuing the broadcasts (the slowest).
  const Picoseconds enqueue = std::min(*std::max_element(r.issue_end.begin(), r.issue_end.end()), push);
  return {{"init_process_group_time", seconds(ctx.params.comm_init)},
          {"broadcast_time", seconds(enqueue)},
          {"sync_time", seconds(push - enqueue)},
          {"total_transfer_time", seconds(push)},
          {"destroy_group_time", seconds(ctx.params.comm_destroy)}};
}

/// One push by a copy-engine P2P engine: every rollout GPU pulls every tensor from its trainer.
Timings engine_push(const SimContext& ctx, const WorkloadArgs& args, const workloads::ModelSpec& spec,
                    const std::vector<std::vector<int>>& groups, std::size_t rollouts,
                    std::int64_t& pieces_count) {
  for (const auto& g : groups) {
    for (int r : g) {
      if (ctx.topology.gpus.at(r).node != ctx.topology.gpus.at(g[0]).node) {
        throw UsageError("--method p2p-engine copies with cudaMemcpyPeerAsync, which cannot reach " +
                         ctx.topology.gpus.at(r).name + " on another machine than trainer " +
                         ctx.topology.gpus.at(g[0]).name + "; use --method broadcast across machines");
      }
    }
  }
  const auto tensors = tensor_pieces(spec, 0);
  pieces_count = static_cast<std::int64_t>(tensors.size() * rollouts);
  Program p = copy_engine_program(groups, tensors, args.integer("--streams"));
  p.warmup = 0;
  p.iterations = 1;
  p.transfer_busy = false;  // not reported
  const RunResult r = ctx.run_raw(std::move(p));
  const Picoseconds push = r.per_iteration;
  // Each trainer's engine submits its own tasks; the largest share sets the submit time.
  std::size_t largest = 0;
  for (const auto& g : groups) largest = std::max(largest, g.size() - 1);
  const Picoseconds submit =
      std::min(push, static_cast<Picoseconds>(tensors.size() * largest) * ctx.params.copy_submit);
  return {{"register_and_start_time", seconds(ctx.params.engine_register)},
          {"update_weights_time", 0.0},
          {"submit_tasks_time", seconds(submit)},
          {"wait_transfers_time", seconds(push - submit)},
          {"sync_time", 0.0},
          {"total_transfer_time", seconds(push)},
          {"stop_time", seconds(ctx.params.engine_stop)}};
}

void simulate(const SimContext& ctx, const WorkloadArgs& args, ResultTable& table) {
  const int n = static_cast<int>(ctx.topology.gpus.size());
  const std::string& model = args.str("--model");
  if (model.empty()) throw UsageError("weight-sync needs --model NAME (`commsim model list`)");
  const workloads::ModelSpec& spec = workloads::model_spec(model);
  if (args.str("--from").empty()) throw UsageError("weight-sync needs --from GPU[S] (the trainers)");
  const std::vector<int> from = parse_gpu_list(args.str("--from"), n);
  if (args.str("--to").empty()) throw UsageError("weight-sync needs --to LIST (the rollout GPUs)");
  const std::vector<int> to = parse_gpu_list(args.str("--to"), n);
  const std::vector<std::vector<int>> groups = rollout_groups(from, to);
  const std::string& method = args.str("--method");
  if (method != "broadcast" && method != "p2p-engine")
    throw UsageError("--method must be broadcast or p2p-engine");
  std::int64_t pieces_count = 0;
  const Timings timings = method == "broadcast"
                              ? broadcast_push(ctx, args, spec, groups, pieces_count)
                              : engine_push(ctx, args, spec, groups, to.size(), pieces_count);
  table.columns = workloads::find_workload("weight-sync").columns;
  table.units = {"", "", "", "", "B", "", "us"};
  table.metadata["from"] = from;
  table.metadata["groups"] = groups;
  table.metadata["to"] = to;
  table.metadata["bucket_bytes"] = bucket_flag(args, 0);
  table.metadata["streams"] = args.integer("--streams");
  table.metadata["note"] =
      "total_transfer_time and its parts are simulated; init/destroy/register/stop are the parameter set's "
      "fixed costs ([setup]); update_weights_time (the engine's CPU-side task list, ~25 us measured) is not "
      "modelled and reads 0; rows that are not simulated have no band (empty time_us_lo/time_us_hi)";
  // What the push runs over, named in one line (comparisons between runs read it from here).
  std::vector<int> all = from;
  all.insert(all.end(), to.begin(), to.end());
  const std::string setup = describe_setup(ctx.runtime, ctx.topology_path, all, ctx.nccl_env);
  table.metadata["setup"] = setup;
  table.notes.push_back(method == "broadcast"
                            ? "pushed by NCCL broadcast over " + setup
                            : "pushed by copy engines (cudaMemcpyPeerAsync, no NCCL) over " + setup);
  const auto tensor_count = static_cast<std::int64_t>(spec.tensors().size());
  for (const auto& [name, v] : timings) {
    table.rows.push_back({spec.name, method, tensor_count, pieces_count,
                          static_cast<std::int64_t>(spec.bytes()), name, v * 1e6});
    // The [setup] constants and the engine's unmodelled task list are not predictions: no band.
    table.unbanded.push_back(name == "init_process_group_time" || name == "destroy_group_time" ||
                             name == "register_and_start_time" || name == "stop_time" ||
                             name == "update_weights_time");
  }
}

}  // namespace

const SimWorkload& sim_workload_weight_sync() {
  static const SimWorkload w{"weight-sync", &simulate, nullptr};
  return w;
}

}  // namespace commsim::sim
