// exchange on the simulator's side: a bidirectional exchange between two GPUs in a P2P mode, a size sweep.
#include "commsim/core/args.hpp"
#include "commsim/core/error.hpp"
#include "commsim/sim/sim_workload.hpp"

namespace commsim::sim {
namespace {

void simulate(const SimContext& ctx, const WorkloadArgs& args, ResultTable& table) {
  const std::vector<int> pr = parse_gpu_list(args.str("--pair"), static_cast<int>(ctx.topology.gpus.size()));
  if (pr.size() != 2) throw UsageError("--pair takes two GPUs, e.g. --pair 0,1");
  const std::string& mode_name = args.str("--mode");
  if (mode_name.empty()) throw UsageError("exchange needs --mode sequential|overlapped|batched");
  const ExchangeMode mode = parse_exchange_mode(mode_name);
  table.columns = workloads::find_workload("exchange").columns;
  table.units = {"B", "us", "GB/s", "GB/s", "", "", "", ""};
  table.metadata["pair"] = pr;
  table.metadata["mode"] = mode_name;
  ctx.progress_start(ctx.sizes.size());
  for (std::uint64_t bytes : ctx.sizes) {
    add_transfer_row(table, {}, bytes, ctx.run(exchange_program(pr[0], pr[1], mode, bytes)),
                     {std::string(exchange_mode_name(mode))});
    ctx.progress_step();
  }
}

Program program(const RowRequest& row) {
  return exchange_program(row.gpus.at(0), row.gpus.at(1), parse_exchange_mode(row.mode), row.bytes);
}

}  // namespace

const SimWorkload& sim_workload_exchange() {
  static const SimWorkload w{"exchange", &simulate, &program};
  return w;
}

}  // namespace commsim::sim
