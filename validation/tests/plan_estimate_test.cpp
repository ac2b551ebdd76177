// Unit tests of the plan wall-time estimate (CPU only): simulated operations plus the tool's own costs.
#include <doctest/doctest.h>

#include <numeric>

#include "commsim/core/error.hpp"
#include "commsim/models/nccl_env.hpp"
#include "commsim/models/params.hpp"
#include "commsim/models/transfer.hpp"
#include "commsim/sim/workloads.hpp"
#include "commsim/topo/load.hpp"
#include "commsim/validation/plan_estimate.hpp"

using namespace commsim;
using namespace commsim::measure;
using namespace commsim::validation;

namespace {
struct Machine {
  models::ModelParams params = models::ModelParams::defaults();
  std::unique_ptr<models::TransferModel> model =
      models::make_transfer_model("nccl", params, models::NcclEnv::parse({}));
  topo::Topology topology;
  std::unique_ptr<sim::Runtime> runtime;
  Machine() {
    topo::Diagnostics diag;
    topology = topo::load_topology(COMMSIM_SOURCE_DIR "/topologies/library/real/h200x4.topo", {}, diag);
    runtime = std::make_unique<sim::Runtime>(topology, *model);
  }
};

std::vector<Config> p2p_plan(int gpus, std::vector<std::uint64_t> sizes) {
  PlanOptions o;
  o.gpu_count = gpus;
  o.sizes = std::move(sizes);
  return plan_configs(o);
}

RunCosts zero_costs() {
  return RunCosts{};
}
}  // namespace

TEST_CASE(
    "plan_estimate: operations are the simulator's own prediction times the iterations of every repetition") {
  Machine m;
  const auto configs = p2p_plan(2, {1024, 1 << 20, 64 << 20});
  PlanShape s;
  s.reps = 3;
  s.warmup = 5;
  s.iterations = 20;
  s.gpus = 2;
  const PlanEstimate e = estimate_plan(configs, s, *m.runtime, zero_costs());
  REQUIRE(e.op_us.size() == configs.size());
  double sum_us = 0;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    sim::Program p = sim::p2p_program(configs[i].src, configs[i].dst, configs[i].bytes);
    p.warmup = 1;
    p.iterations = 2;
    const double direct_us = static_cast<double>(m.runtime->run(p).per_iteration) / 1e6;
    CHECK(e.op_us[i] == doctest::Approx(direct_us));
    sum_us += direct_us;
  }
  CHECK(e.operations_s == doctest::Approx(3 * 25 * sum_us / 1e6));
  // With no costs of its own the tool's estimate is the operations alone, and the band is a point.
  CHECK(e.total_s == doctest::Approx(e.operations_s));
  CHECK(e.low_s == doctest::Approx(e.total_s));
  CHECK(e.high_s == doctest::Approx(e.total_s));
}

TEST_CASE("plan_estimate: the tool's costs add up per GPU, communicator, run and timed iteration") {
  Machine m;
  const auto configs = p2p_plan(4, {8, 16});  // 12 directed pairs x 2 sizes: 12 communicators
  RunCosts k;
  k.startup_s = 1;
  k.per_gpu_s = 0.5;
  k.comm_init_s = 0.25;
  k.per_run_s = 0.001;
  k.per_timed_op_s = 0.0001;
  k.teardown_s = 2;
  PlanShape s;
  s.reps = 4;
  s.warmup = 1;
  s.iterations = 9;
  s.gpus = 4;
  s.drift_seconds = 30;
  PlanEstimate e = estimate_plan(configs, s, *m.runtime, k);
  CHECK(e.communicators == 12);
  CHECK(e.startup_s == doctest::Approx(1 + 4 * 0.5));
  CHECK(e.communicators_s == doctest::Approx(12 * 0.25));
  CHECK(e.drift_s == doctest::Approx(60));
  CHECK(e.per_run_s == doctest::Approx(4 * 24 * 0.001));
  CHECK(e.teardown_s == doctest::Approx(2));
  CHECK(e.total_s == doctest::Approx(3 + 3 + 60 + 0.096 + 2 + e.operations_s));
  s.timed_alone = true;  // per-op timing: every iteration synchronised
  e = estimate_plan(configs, s, *m.runtime, k);
  CHECK(e.per_run_s == doctest::Approx(4 * 24 * (0.001 + 10 * 0.0001)));
  s.thermal_timeout_s = 300;  // a thermal warmup widens the band up to its timeout, not the best guess
  const PlanEstimate hot = estimate_plan(configs, s, *m.runtime, k);
  CHECK(hot.total_s == doctest::Approx(e.total_s));
  CHECK(hot.high_s == doctest::Approx(e.high_s + 300));
}

TEST_CASE("plan_estimate: an overlapped exchange opens two communicators over its pair") {
  Machine m;
  PlanOptions o;
  o.workload = "exchange";
  o.gpu_count = 4;
  o.pair = {0, 1};
  o.mode = "overlapped";
  o.sizes = {1 << 20};
  const auto configs = plan_configs(o);
  PlanShape s;
  s.gpus = 2;
  CHECK(estimate_plan(configs, s, *m.runtime, zero_costs()).communicators == 2);
}

TEST_CASE("plan_estimate: larger messages take longer") {
  Machine m;
  PlanShape s;
  s.gpus = 2;
  const double small = estimate_plan(p2p_plan(2, {1 << 20}), s, *m.runtime).total_s;
  const double large = estimate_plan(p2p_plan(2, {1ULL << 30}), s, *m.runtime).total_s;
  CHECK(large > small);
}

TEST_CASE("plan_estimate: a GPU outside the topology and an oversized plan are refused") {
  Machine m;
  PlanShape s;
  CHECK_THROWS_AS(estimate_plan(p2p_plan(8, {8}), s, *m.runtime), UsageError);  // the topology has 4 GPUs
  std::vector<Config> many(kMaxEstimatedConfigs + 1, p2p_plan(2, {8}).front());
  CHECK_THROWS_AS(estimate_plan(many, s, *m.runtime), UsageError);
}

TEST_CASE("plan_estimate: the text gives the total and its band") {
  PlanEstimate e;
  e.total_s = 12.34;
  e.low_s = 9.8;
  e.high_s = 15.1;
  CHECK(format_estimate(e) == "12.3 s (9.8-15.1 s)");
  e.total_s = 175.2;
  e.low_s = 161;
  e.high_s = 192.6;
  CHECK(format_estimate(e) == "175 s (161-193 s)");
}
