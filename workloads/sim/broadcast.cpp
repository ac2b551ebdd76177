// broadcast on the simulator's side: nccl-tests broadcast_perf, or a model's tensors broadcast one by one.
#include <algorithm>

#include "commsim/core/args.hpp"
#include "commsim/core/error.hpp"
#include "commsim/sim/sim_workload.hpp"
#include "commsim/workloads/model_spec.hpp"

namespace commsim::sim {
namespace {

/// --model NAME: one broadcast per tensor (or per --bucket-bytes bucket) from --root, timed as one push.
void simulate_model(const SimContext& ctx, const WorkloadArgs& args, ResultTable& table) {
  const int n = static_cast<int>(ctx.topology.gpus.size());
  const workloads::ModelSpec& spec = workloads::model_spec(args.str("--model"));
  std::vector<int> gpus = parse_gpu_list(args.str("--gpus"), n);
  const int root = args.integer("--root");
  if (root < 0 || root >= static_cast<int>(gpus.size()))
    throw UsageError("--root " + std::to_string(root) + " is not a rank of --gpus");
  std::rotate(gpus.begin(), gpus.begin() + root, gpus.end());  // the program broadcasts from its first GPU
  const auto pieces = tensor_pieces(spec, bucket_flag(args, 0));
  Program p = broadcast_pieces_program(gpus, pieces, ctx.framework,
                                       thread_per_gpu(args.str("--launch"), ctx.topology, gpus));
  p.iterations = ctx.iterations;
  p.warmup = ctx.warmup;
  p.transfer_busy = false;  // not reported
  const RunResult r = ctx.run_raw(std::move(p));
  const double t_us = static_cast<double>(r.per_iteration) / 1e6;
  table.columns = {"model", "tensors", "broadcasts", "bytes", "time_us", "algbw_gbps", "busbw_gbps", "ngpus"};
  table.units = {"", "", "", "B", "us", "GB/s", "GB/s", ""};
  table.metadata["gpus"] = gpus;
  table.metadata["bucket_bytes"] = bucket_flag(args, 0);
  const double bw = static_cast<double>(spec.bytes()) / (t_us * 1e3);
  table.rows.push_back({spec.name, static_cast<std::int64_t>(spec.tensors().size()),
                        static_cast<std::int64_t>(pieces.size()), static_cast<std::int64_t>(spec.bytes()),
                        t_us, bw, bw, static_cast<std::int64_t>(gpus.size())});
}

void simulate(const SimContext& ctx, const WorkloadArgs& args, ResultTable& table) {
  if (!args.str("--model").empty()) return simulate_model(ctx, args, table);
  collective_workload<models::CollOp::Broadcast>().simulate(ctx, args, table);
}

}  // namespace

const SimWorkload& sim_workload_broadcast() {
  static const SimWorkload w{"broadcast", &simulate,
                             collective_workload<models::CollOp::Broadcast>().program};
  return w;
}

}  // namespace commsim::sim
