// Unit tests of measurement planning and statistics (CPU only).
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "commsim/core/error.hpp"
#include "commsim/measure/plan.hpp"
#include "commsim/measure/stats.hpp"

using namespace commsim;
using namespace commsim::measure;

namespace {
std::vector<std::uint64_t> sweep() {
  std::vector<std::uint64_t> s;
  for (std::uint64_t b = 1; b <= (1ULL << 30); b *= 2) s.push_back(b);
  return s;
}
}  // namespace

TEST_CASE("plan: p2p over 4 GPUs is 12 directed pairs x 31 sizes") {
  PlanOptions o;
  o.gpu_count = 4;
  o.sizes = sweep();
  const auto cs = plan_configs(o);
  CHECK(cs.size() == 372);
  std::set<std::pair<int, int>> pairs;
  for (const auto& c : cs) pairs.insert({c.src, c.dst});
  CHECK(pairs.size() == 12);
  CHECK(cs[5].tag() == "p2p_cfg0005_s0d1_sz32");
}

TEST_CASE("plan: the order is a seeded permutation, the same for the same seed and repetition") {
  const auto a = run_order(372, 42, 0);
  CHECK(a == run_order(372, 42, 0));
  CHECK(a != run_order(372, 42, 1));
  CHECK(a != run_order(372, 7, 0));
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 372; ++i) CHECK(sorted[i] == i);
}

TEST_CASE("plan: impossible plans are usage errors") {
  PlanOptions o;
  o.gpu_count = 1;
  o.sizes = {8};
  CHECK_THROWS_WITH_AS(plan_configs(o), doctest::Contains("at least 2 GPUs"), UsageError);
  o.gpu_count = 4;
  o.workload = "gather";
  CHECK_THROWS_WITH_AS(plan_configs(o), doctest::Contains("commsim-measure runs: p2p"), UsageError);
  o.workload = "p2p";
  o.gpus = {0, 5};
  CHECK_THROWS_WITH_AS(plan_configs(o), doctest::Contains("GPU 5 does not exist"), UsageError);
  o.gpus = {};
  o.workload = "exchange";
  o.pair = {0, 1};
  o.mode = "parallel";
  CHECK_THROWS_AS(plan_configs(o), UsageError);
  o.gpu_count = 0;
  CHECK_THROWS_WITH_AS(plan_configs(o), doctest::Contains("no GPU"), UsageError);
}

TEST_CASE("stats: median, extremes, sample stdev and CV") {
  const Summary s = summarize({4, 1, 3, 2});
  CHECK(s.n == 4);
  CHECK(s.median == doctest::Approx(2.5));
  CHECK(s.min == 1);
  CHECK(s.max == 4);
  CHECK(s.mean == doctest::Approx(2.5));
  CHECK(s.stdev == doctest::Approx(1.290994));
  CHECK(s.cv == doctest::Approx(1.290994 / 2.5));
  CHECK(summarize({}).n == 0);
  CHECK(summarize({7}).stdev == 0);
}

TEST_CASE("plan: a pipeline is activation sizes x microbatch counts x modes over all stages") {
  PlanOptions o;
  o.workload = "pipeline";
  o.gpu_count = 4;
  o.sizes = {4 << 20, 64 << 20};
  o.microbatches = {4, 16};
  o.modes = {"sequential", "overlapped", "batched"};
  o.fwd_us = 500;
  o.bwd_us = 1000;
  const auto cs = plan_configs(o);
  REQUIRE(cs.size() == 12);
  CHECK(cs[0].gpus.size() == 4);
  CHECK(cs[0].microbatches == 4);
  CHECK(cs[0].tag() == "pipeline_cfg0000_p4_v1_sz4194304_m4_sequential");
  o.chunks = 2;
  CHECK(plan_configs(o)[0].tag() == "pipeline_cfg0000_p4_v2_sz4194304_m4_sequential");
  o.microbatches = {6};  // interleaving needs a multiple of the 4 stages
  CHECK_THROWS_WITH_AS(plan_configs(o), doctest::Contains("multiple of the stages"), UsageError);
  o.chunks = 1;
  o.microbatches = {4, 16};
  o.modes = {"parallel"};
  CHECK_THROWS_WITH_AS(plan_configs(o), doctest::Contains("valid: sequential, overlapped, batched"),
                       UsageError);
  o.modes = {"batched"};
  o.microbatches = {0};
  CHECK_THROWS_AS(plan_configs(o), UsageError);
}

TEST_CASE("collective_sizes: rounded down to 16-byte pieces per rank, as nccl-tests sizes them") {
  const std::vector<std::uint64_t> sizes = {8, 16, 128, 1024, 2048, 536870912, 1073741824};
  // 3 ranks: each rank's piece is a multiple of 16 B (nccl-tests printed 96, 2016 and 536870880 on the
  // 3-GPU alltoall of validation/data/h200x4/agreement); 8 and 16 B round to 0 and are dropped.
  CHECK(collective_sizes("alltoall", sizes, 3) ==
        std::vector<std::uint64_t>{96, 1008, 2016, 536870880, 1073741808});
  // 4 ranks: a multiple of 64 B.
  CHECK(collective_sizes("all_gather", sizes, 4) ==
        std::vector<std::uint64_t>{128, 1024, 2048, 536870912, 1073741824});
  // all_reduce needs whole floats only.
  CHECK(collective_sizes("all_reduce", {2, 8, 10}, 3) == std::vector<std::uint64_t>{8});
  // Byte workloads keep every size.
  CHECK(collective_sizes("sendrecv", {1, 3}, 3) == std::vector<std::uint64_t>{1, 3});
  // Two sizes that round to the same value are kept once.
  CHECK(collective_sizes("reduce_scatter", {48, 52, 56}, 3) == std::vector<std::uint64_t>{48});
}

TEST_CASE(
    "plan: a plan beyond the configuration limit is refused at once, before any configuration is built") {
  // Every pair of 2,000 GPUs at 31 sizes: 124 million configurations (this never ended before the limit).
  PlanOptions o;
  o.gpu_count = 2000;
  o.sizes = sweep();
  CHECK_THROWS_WITH_AS(plan_configs(o), doctest::Contains("refused: the plan has 123938000 configurations"),
                       UsageError);
  // One collective over 65,536 GPUs at 31 sizes: 2 million GPU entries, within the limits, planned.
  o.workload = "all_reduce";
  o.gpu_count = 65536;
  const auto cs = plan_configs(o);
  CHECK(cs.size() == 31);
  CHECK(cs.front().gpus.size() == 65536);
  // A pipeline's product of sizes, microbatch counts and modes is counted too.
  PlanOptions p;
  p.workload = "pipeline";
  p.gpu_count = 4;
  p.sizes = sweep();
  for (int m = 1; m <= 2000; ++m) p.microbatches.push_back(m);
  p.modes = {"sequential", "overlapped", "batched"};
  CHECK_THROWS_WITH_AS(plan_configs(p), doctest::Contains("at most 100000 configurations"), UsageError);
}
