// alltoallv on the simulator's side: the uneven all-to-all of MoE token dispatch, grouped sends and receives.
#include "commsim/workloads/alltoallv.hpp"
#include "commsim/core/args.hpp"
#include "commsim/sim/sim_workload.hpp"

namespace commsim::sim {
namespace {

/// Every rank sends matrix[r*n+p] bytes to rank p and receives matrix[p*n+r] from it, in NCCL's p2p order
/// (peer r+step, from r-step), in one group.
Program program(const RowRequest& row) {
  const int n = static_cast<int>(row.gpus.size());
  const std::vector<std::uint64_t> m = workloads::alltoallv_matrix(
      n, row.bytes, row.args.number("--skew"), static_cast<std::uint64_t>(row.args.integer("--skew-seed")),
      row.args.str("--counts"), parse_size_flag("--block-align", row.args.str("--block-align")));
  const auto nn = static_cast<std::size_t>(n);
  std::vector<KernelSpec> kernels;
  for (std::size_t r = 0; r < nn; ++r) {
    KernelSpec k = p2p_kernel(row.gpus[r], 0, 0, {}, "alltoallv");
    // The rank's own row and column meet in a copy to self, as commsim-measure's send and receive to itself.
    if (m[r * nn + r] > 0) k.ops.push_back({OpSpec::Kind::SelfCopy, row.gpus[r], m[r * nn + r]});
    for (std::size_t step = 1; step < nn; ++step) {
      const std::size_t to = (r + step) % nn, from = (r + nn - step) % nn;
      if (m[r * nn + to] > 0) k.ops.push_back(send(row.gpus[to], m[r * nn + to]));
      if (m[from * nn + r] > 0) k.ops.push_back(recv(row.gpus[from], m[from * nn + r]));
    }
    kernels.push_back(std::move(k));
  }
  return grouped_program(row.gpus, std::move(kernels), row.thread_per_gpu);
}

void simulate(const SimContext& ctx, const WorkloadArgs& args, ResultTable& table) {
  simulate_ring(ctx, args, table, &program);
  table.metadata["skew"] = args.number("--skew");
  table.metadata["skew_seed"] = args.integer("--skew-seed");
  table.metadata["counts"] = args.str("--counts");
}

}  // namespace

const SimWorkload& sim_workload_alltoallv() {
  static const SimWorkload w{"alltoallv", &simulate, &program};
  return w;
}

}  // namespace commsim::sim
