// pipeline on the simulator's side: Megatron 1F1B or interleaved steps over stages, per stage compute and
// bubble.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "commsim/core/args.hpp"
#include "commsim/core/error.hpp"
#include "commsim/sim/sim_workload.hpp"

namespace commsim::sim {
namespace {

/// A compute time flag in microseconds as integer picoseconds.
Picoseconds us_flag(const char* flag, double us) {
  if (!(us >= 0) || us > 1e9) throw UsageError(std::string(flag) + " must be between 0 and 1e9 microseconds");
  return static_cast<Picoseconds>(std::llround(us * 1e6));
}

/// The stages' GPUs: --gpus in order, or the first --stages GPUs.
std::vector<int> stage_gpus(const WorkloadArgs& args, int n) {
  const int stages = args.integer("--stages");
  std::vector<int> gpus;
  if (args.str("--gpus") != "all") {
    gpus = parse_gpu_list(args.str("--gpus"), n);
    if (stages > 0 && static_cast<int>(gpus.size()) != stages)
      throw UsageError("--stages " + std::to_string(stages) + " but --gpus lists " +
                       std::to_string(gpus.size()) + " GPUs");
    return gpus;
  }
  if (stages < 2) throw UsageError("pipeline needs --stages P (at least 2) or --gpus LIST");
  if (stages > n) {
    throw UsageError("--stages " + std::to_string(stages) + " is more than the topology's " +
                     std::to_string(n) + " GPUs");
  }
  for (int i = 0; i < stages; ++i) gpus.push_back(i);
  return gpus;
}

std::vector<int> microbatch_list(const std::string& flag) {
  std::vector<int> mbs;
  for (const std::string& m : split_list(flag)) {
    char* end = nullptr;
    const long v = std::strtol(m.c_str(), &end, 10);
    if (end == m.c_str() || *end != '\0' || v < 1 || v > 10000)
      throw UsageError("--microbatches " + m +
                       ": expected a whole number between 1 and 10000 (the most commsim simulates)");
    mbs.push_back(static_cast<int>(v));
  }
  return mbs;
}

/// One row per stage of one simulated step. `compute_bound` (us): the step without communication
/// (pipeline_compute_bound_us): given, so outside the prediction band.
void add_stage_rows(const SimContext& ctx, ResultTable& table, const std::vector<int>& gpus,
                    std::uint64_t bytes, int microbatches, ExchangeMode mode, const RunResult& r,
                    double compute_bound) {
  const double step = static_cast<double>(r.per_iteration) / 1e6;
  for (std::size_t st = 0; st < gpus.size(); ++st) {
    const auto it = r.busy.find(gpus[st]);
    const GpuBusy b = it == r.busy.end() ? GpuBusy{} : it->second;
    const double compute = static_cast<double>(b.compute) / 1e6 / ctx.iterations;
    const double comm = static_cast<double>(b.transfer) / 1e6 / ctx.iterations;
    table.rows.push_back({static_cast<std::int64_t>(bytes), std::int64_t{microbatches},
                          std::string(exchange_mode_name(mode)), ctx.framework_name, step,
                          static_cast<std::int64_t>(st), std::int64_t{gpus[st]}, compute, comm,
                          std::max(0.0, step - compute)});
    table.band_exact_us.push_back(std::min(step, compute_bound));
  }
}

void simulate(const SimContext& ctx, const WorkloadArgs& args, ResultTable& table) {
  const std::string& schedule = args.str("--schedule");
  const int chunks = args.integer("--chunks");
  const bool interleaved = schedule == "interleaved";
  if (!interleaved && chunks > 1)
    throw UsageError("--chunks " + std::to_string(chunks) + " needs --schedule interleaved");
  if (interleaved && chunks < 2) throw UsageError("--schedule interleaved needs --chunks V (at least 2)");
  const std::vector<int> gpus = stage_gpus(args, static_cast<int>(ctx.topology.gpus.size()));
  if (args.str("--microbatches").empty()) throw UsageError("pipeline needs --microbatches M[,M...]");
  if (args.str("--activation-bytes").empty())
    throw UsageError("pipeline needs --activation-bytes SIZE[,SIZE...]");
  const std::vector<int> mbs = microbatch_list(args.str("--microbatches"));
  std::vector<std::uint64_t> acts;
  for (const std::string& a : split_list(args.str("--activation-bytes")))
    acts.push_back(parse_size_flag("--activation-bytes", a));
  std::vector<ExchangeMode> modes;
  const std::string& mode_list = args.str("--mode");
  for (const std::string& m : split_list(mode_list.empty() ? "sequential,overlapped,batched" : mode_list))
    modes.push_back(parse_exchange_mode(m));
  table.columns = workloads::find_workload("pipeline").columns;
  table.units = {"B", "", "", "", "us", "", "", "us", "us", "us"};
  table.metadata["gpus"] = gpus;
  table.metadata["schedule"] = schedule;
  table.metadata["chunks"] = interleaved ? chunks : 1;
  table.metadata["fwd_us"] = args.number("--fwd-us");
  table.metadata["bwd_us"] = args.number("--bwd-us");
  ctx.progress_start(acts.size() * mbs.size() * modes.size());
  for (std::uint64_t a : acts) {
    for (int m : mbs) {
      for (ExchangeMode mode : modes) {
        PipelineSpec spec;
        spec.gpus = gpus;
        spec.microbatches = m;
        spec.activation_bytes = a;
        spec.fwd = us_flag("--fwd-us", args.number("--fwd-us"));
        spec.bwd = us_flag("--bwd-us", args.number("--bwd-us"));
        spec.mode = mode;
        spec.framework = ctx.framework;
        spec.chunks = interleaved ? chunks : 1;
        Program p = pipeline_program(spec);
        p.iterations = ctx.iterations;
        p.warmup = ctx.warmup;
        add_stage_rows(ctx, table, gpus, a, m, mode, ctx.run_raw(std::move(p)),
                       pipeline_compute_bound_us(static_cast<int>(gpus.size()), m, spec.chunks,
                                                 args.number("--fwd-us"), args.number("--bwd-us")));
        ctx.progress_step();
      }
    }
  }
}

Program program(const RowRequest& row) {
  PipelineSpec spec;
  spec.gpus = row.gpus;
  spec.microbatches = row.microbatches;
  spec.activation_bytes = row.bytes;
  spec.fwd = row.fwd;
  spec.bwd = row.bwd;
  spec.mode = parse_exchange_mode(row.mode);
  spec.framework = row.framework;
  spec.chunks = row.chunks;
  return pipeline_program(spec);
}

}  // namespace

const SimWorkload& sim_workload_pipeline() {
  static const SimWorkload w{"pipeline", &simulate, &program};
  return w;
}

}  // namespace commsim::sim
