// grad-sync on the simulator's side: data-parallel gradient all-reduce in buckets, optionally against a
// baseline.
#include "commsim/core/args.hpp"
#include "commsim/core/error.hpp"
#include "commsim/sim/sim_workload.hpp"
#include "commsim/workloads/model_spec.hpp"

namespace commsim::sim {
namespace {

struct Case {
  std::string name, topology;
  double time_us;
  int ngpus;
  std::string setup;  ///< describe_setup: fabric, NICs, transport
};

void simulate(const SimContext& ctx, const WorkloadArgs& args, ResultTable& table) {
  const std::string& model = args.str("--model");
  if (model.empty()) throw UsageError("grad-sync needs --model NAME (`commsim model list`)");
  const workloads::ModelSpec& spec = workloads::model_spec(model);
  const std::uint64_t bucket = bucket_flag(args, 25ULL << 20);
  const auto buckets = tensor_pieces(spec, bucket, true);
  const workloads::WorkloadSpec& w = workloads::find_workload("grad-sync");
  table.columns = w.columns;
  table.units = {"", "", "", "", "", "B", "B", "us", "GB/s", "GB/s", "x"};
  std::vector<Case> cases;
  auto one = [&](Runtime& rt, const std::function<RunResult(Program)>& runner, const std::string& name,
                 const std::string& topology, const std::vector<std::string>& env) {
    const std::vector<int> gpus =
        parse_gpu_list(args.str("--gpus"), static_cast<int>(rt.topology().gpus.size()));
    Program p = grad_sync_program(gpus, buckets, ctx.framework);
    p.warmup = 0;
    p.iterations = 1;
    cases.push_back({name, topology, static_cast<double>(runner(std::move(p)).per_iteration) / 1e6,
                     static_cast<int>(gpus.size()), describe_setup(rt, topology, gpus, env)});
  };
  one(ctx.runtime, ctx.run_raw, "this", ctx.topology_path, ctx.nccl_env);
  const std::string& baseline_topology = args.str("--baseline-topology");
  const std::vector<std::string>& baseline_env = args.list("--baseline-nccl-env");
  if (!baseline_topology.empty() || !baseline_env.empty()) {
    // The same gradient sync on the baseline: another fabric, or other NCCL knobs (e.g. NCCL_IB_DISABLE=1).
    std::vector<std::string> env = ctx.nccl_env;
    env.insert(env.end(), baseline_env.begin(), baseline_env.end());
    const std::string path = baseline_topology.empty() ? ctx.topology_path : baseline_topology;
    ctx.with_setup(path, env, [&](Runtime& rt) {
      one(
          rt, [&](Program p) { return rt.run(p); }, "baseline", path, env);
    });
    table.metadata["baseline_nccl_env"] = baseline_env;
    // Both sides named in one line: what the speedup compares.
    table.notes.push_back("speedup = baseline time / this time; this = " + cases.front().setup +
                          " | baseline = " + cases.back().setup);
    table.metadata["baseline_setup"] = cases.back().setup;
  } else {
    table.notes.push_back("this = " + cases.front().setup + " (no baseline: speedup 1)");
  }
  table.metadata["this_setup"] = cases.front().setup;
  const double base = cases.back().time_us;
  for (const Case& c : cases) {
    const double algbw = static_cast<double>(spec.bytes()) / (c.time_us * 1e3);
    table.rows.push_back({c.name, c.topology, spec.name, std::int64_t{c.ngpus},
                          static_cast<std::int64_t>(buckets.size()), static_cast<std::int64_t>(bucket),
                          static_cast<std::int64_t>(spec.bytes()), c.time_us, algbw,
                          algbw * w.busbw_factor(c.ngpus), base / c.time_us});
  }
}

}  // namespace

const SimWorkload& sim_workload_grad_sync() {
  static const SimWorkload w{"grad-sync", &simulate, nullptr};
  return w;
}

}  // namespace commsim::sim
