// p2p on the simulator's side: one send from --src to --dst (or every directed pair), a size sweep.
#include "commsim/core/args.hpp"
#include "commsim/core/error.hpp"
#include "commsim/sim/sim_workload.hpp"

namespace commsim::sim {
namespace {

void simulate(const SimContext& ctx, const WorkloadArgs& args, ResultTable& table) {
  const int n = static_cast<int>(ctx.topology.gpus.size());
  const int src = args.integer("--src");
  const int dst = args.integer("--dst");
  const std::string& all = args.str("--pairs");
  std::vector<std::pair<int, int>> pairs;
  if (!all.empty()) {
    if (all != "all") throw UsageError("--pairs takes 'all' (or use --src and --dst)");
    if (src >= 0 || dst >= 0) throw UsageError("--pairs all and --src/--dst exclude each other");
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b) {
        if (a != b) pairs.push_back({a, b});
      }
    }
  } else {
    if (src < 0 || dst < 0) throw UsageError("p2p needs --src A --dst B, or --pairs all");
    parse_gpu_list(std::to_string(src), n);
    parse_gpu_list(std::to_string(dst), n);
    pairs.push_back({src, dst});
  }
  table.columns = workloads::find_workload("p2p").columns;
  table.units = {"", "", "B", "us", "GB/s", "GB/s", "", "", ""};
  ctx.progress_start(pairs.size() * ctx.sizes.size());
  for (const auto& [a, b] : pairs) {
    for (std::uint64_t bytes : ctx.sizes) {
      add_transfer_row(table, {std::int64_t{a}, std::int64_t{b}}, bytes, ctx.run(p2p_program(a, b, bytes)),
                       {});
      ctx.progress_step();
    }
  }
}

Program program(const RowRequest& row) {
  // Exactly two: with more, every GPU after the second would be silently left out.
  if (row.gpus.size() != 2) {
    throw UsageError(
        "p2p sends from the first GPU of the list to the second, so it takes exactly two GPUs (e.g. "
        "0,1), not " +
        std::to_string(row.gpus.size()));
  }
  return p2p_program(row.gpus[0], row.gpus[1], row.bytes);
}

}  // namespace

const SimWorkload& sim_workload_p2p() {
  static const SimWorkload w{"p2p", &simulate, &program};
  return w;
}

}  // namespace commsim::sim
