// Runtime tests for compute kernels, stream waits, collectives and pipeline schedules: closed forms under the
// ideal model, the NCCL model's protocol choices, and deadlock reports.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "commsim/core/error.hpp"
#include "commsim/models/transfer.hpp"
#include "commsim/sim/runtime.hpp"
#include "commsim/sim/schedules.hpp"
#include "commsim/sim/trace.hpp"
#include "commsim/topo/load.hpp"
#include "tiny_topology.hpp"

using namespace commsim;
using namespace commsim::sim;
using commsim::sim::testing::kBridge;
using commsim::sim::testing::kBridgeBw;
using commsim::sim::testing::tiny;

namespace {

double once(Runtime& rt, Program p) {
  p.warmup = 0;
  p.iterations = 1;
  return static_cast<double>(rt.run(p).per_iteration) / 1e12;
}

KernelSpec compute(int gpu, int stream, Picoseconds d) {
  KernelSpec k;
  k.gpu = gpu;
  k.stream = stream;
  k.compute = d;
  k.name = "compute";
  return k;
}

}  // namespace

TEST_CASE("runtime: a stream wait orders kernels of two streams, without it they overlap") {
  const auto t = tiny(kBridge, "A6000");
  const auto model = models::make_transfer_model("ideal", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  Program p;
  p.comms.push_back({{0, 1}});
  p.launches.push_back({0, {compute(0, 0, 1'000'000)}, 0});
  p.launches.push_back({0, {compute(0, 1, 1'000'000)}, 0});
  CHECK(once(rt, p) == doctest::Approx(1e-6));
  p.launches.back().kernels.front().wait_streams = {0};
  CHECK(once(rt, p) == doctest::Approx(2e-6));
}

TEST_CASE("runtime: under the ideal model an all-reduce of S on 2 GPUs takes S / link bandwidth") {
  const auto t = tiny(kBridge, "A6000");
  const auto model = models::make_transfer_model("ideal", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  const std::uint64_t s = 1'000'000'000;
  // Ring all-reduce: each rank sends 2(n-1)/n x S = S to the other, both directions at once.
  CHECK(once(rt, collective_program({0, 1}, models::CollOp::AllReduce, s)) == doctest::Approx(s / kBridgeBw));
  // All-gather: (n-1)/n x S each way.
  CHECK(once(rt, collective_program({0, 1}, models::CollOp::AllGather, s)) ==
        doctest::Approx(s / 2 / kBridgeBw));
  // Broadcast from rank 1: S one way.
  CHECK(once(rt, collective_program({0, 1}, models::CollOp::Broadcast, s, 1)) ==
        doctest::Approx(s / kBridgeBw));
}

TEST_CASE("runtime: a collective a rank never joins is reported as a deadlock naming the missing GPU") {
  const auto t = tiny(kBridge, "A6000");
  const auto model = models::make_transfer_model("nccl", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  Program p = collective_program({0, 1}, models::CollOp::AllReduce, 1024);
  p.launches.front().kernels.pop_back();  // GPU 1 never issues its part
  CHECK_THROWS_WITH_AS(rt.run(p), doctest::Contains("waits in all_reduce for GPU(s) 1"), SimulationError);
  Program q = collective_program({0, 1}, models::CollOp::AllReduce, 1024);
  q.launches.front().kernels.back().collective->bytes = 2048;
  CHECK_THROWS_WITH_AS(rt.run(q), doctest::Contains("collective mismatch"), SimulationError);
}

TEST_CASE("runtime: kernels issued as their streams need them keep a 20,000-kernel chain's closed form") {
  // Two streams of one GPU take turns, each kernel waiting for the other stream's last one: every kernel
  // starts when the previous ends. 20,000 kernels outgrow the store of issued kernels many times over, and
  // each waits on one that ended and was released.
  const auto t = tiny(kBridge, "A6000");
  const auto model = models::make_transfer_model("ideal", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  Program p;
  p.comms.push_back({{0, 1}});
  constexpr int kKernels = 20'000;
  for (int i = 0; i < kKernels; ++i) {
    p.launches.push_back({0, {compute(0, i % 2, 1'000'000)}, 0});
    if (i > 0) p.launches.back().kernels.front().wait_streams = {1 - i % 2};
  }
  CHECK(once(rt, p) == doctest::Approx(kKernels * 1e-6));
  // Without the waits the two streams overlap: half the time.
  for (auto& l : p.launches) l.kernels.front().wait_streams.clear();
  CHECK(once(rt, p) == doctest::Approx(kKernels / 2 * 1e-6));
  // Kernels that wait on one that ended (and was released) long before: stream 0's only kernel (1 us), then
  // 5,000 of 1 us on stream 1, each waiting for it.
  Program q;
  q.comms.push_back({{0, 1}});
  q.launches.push_back({0, {compute(0, 0, 1'000'000)}, 0});
  constexpr int kLater = 5'000;
  for (int i = 0; i < kLater; ++i) {
    q.launches.push_back({0, {compute(0, 1, 1'000'000)}, 0});
    q.launches.back().kernels.front().wait_streams = {0};
  }
  CHECK(once(rt, q) == doctest::Approx((1 + kLater) * 1e-6));
}

TEST_CASE(
    "runtime: a deadlock counts the kernels never issued behind it, a bad launch fails before the run") {
  const auto t = tiny(kBridge, "A6000");
  const auto model = models::make_transfer_model("nccl", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  Program p;
  p.comms.push_back({{0, 1}});
  p.launches.push_back({0, {p2p_kernel(0, 0, 0, {{OpSpec::Kind::Send, 1, 1024}}, "lonely send")}});
  for (int i = 0; i < 3000; ++i) p.launches.push_back({0, {compute(0, 0, 1'000)}, 0});
  p.launches.push_back({1, {compute(1, 0, 1'000)}, 0});
  p.warmup = 1;
  p.iterations = 2;  // GPU 1's three kernels end; GPU 0's 3 x 3001 do not
  CHECK_THROWS_WITH_AS(rt.run(p), doctest::Contains("9003 kernel(s) cannot finish"), SimulationError);
  // A kernel on a GPU the topology lacks, after the one that would deadlock: refused before anything runs.
  p.launches.push_back({1, {compute(7, 0, 1'000)}, 0});
  CHECK_THROWS_WITH_AS(rt.run(p), doctest::Contains("names GPU 7"), UsageError);
}

TEST_CASE("runtime: a program that does not ask for transfer busy times runs the same without them") {
  const auto t = tiny(kBridge, "A6000");
  const auto model = models::make_transfer_model("nccl", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  Program p = collective_program({0, 1}, models::CollOp::AllReduce, 64u << 20);
  const RunResult with = rt.run(p);
  p.transfer_busy = false;
  const RunResult without = rt.run(p);
  CHECK(with.per_iteration == without.per_iteration);
  CHECK(with.iteration_end == without.iteration_end);
  REQUIRE(with.busy.count(0) == 1);
  CHECK(with.busy.at(0).transfer > 0);
  CHECK((without.busy.count(0) == 0 || without.busy.at(0).transfer == 0));
}

TEST_CASE("runtime: the NCCL model picks LL for small all-reduces and Simple for large ones") {
  const auto t = tiny(kBridge, "A6000");
  const auto model = models::make_transfer_model("nccl", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  auto proto = [&](std::uint64_t bytes) {
    const RunResult r = rt.run(collective_program({0, 1}, models::CollOp::AllReduce, bytes));
    REQUIRE(r.collectives.size() == 1);
    return r.collectives.front().protocol;
  };
  CHECK(proto(1024) == models::Protocol::Ll);
  CHECK(proto(1ULL << 30) == models::Protocol::Simple);
  const auto simple = models::make_transfer_model("nccl", models::ModelParams::defaults(),
                                                  models::NcclEnv::parse({"NCCL_PROTO=Simple"}));
  Runtime rt2(t, *simple);
  CHECK(rt2.run(collective_program({0, 1}, models::CollOp::AllReduce, 1024)).collectives.front().protocol ==
        models::Protocol::Simple);
}

TEST_CASE("pipeline: 1F1B with negligible communication takes (M + P - 1) x (F + B)") {
  const auto t = tiny(kBridge, "A6000");
  const auto model = models::make_transfer_model("ideal", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  for (ExchangeMode mode : {ExchangeMode::Sequential, ExchangeMode::Overlapped, ExchangeMode::Batched}) {
    for (Framework f : {Framework::Nccl, Framework::Torch}) {
      PipelineSpec s;
      s.gpus = {0, 1};
      s.microbatches = 4;
      s.activation_bytes = 1;
      s.fwd = 100'000'000;  // 100 us
      s.bwd = 200'000'000;
      s.mode = mode;
      s.framework = f;
      const std::string what = std::string(exchange_mode_name(mode)) + " " + framework_name(f);
      CAPTURE(what);
      // Within the transfers' hop latencies (0.15 us each, a handful on the critical path).
      CHECK(once(rt, pipeline_program(s)) == doctest::Approx((4 + 2 - 1) * 300e-6).epsilon(2e-3));
    }
  }
}

TEST_CASE("pipeline: large activations cost what the transfers add, sequential is slower than batched") {
  const auto t = tiny(kBridge, "A6000");
  const auto model = models::make_transfer_model("ideal", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  PipelineSpec s;
  s.gpus = {0, 1};
  s.microbatches = 1;
  s.activation_bytes = 56'250'000;  // 1 ms over the bridge
  s.fwd = 0;
  s.bwd = 0;
  s.mode = ExchangeMode::Batched;
  // One microbatch on 2 stages: activation forward, then its gradient back: 2 transfers in sequence.
  CHECK(once(rt, pipeline_program(s)) == doctest::Approx(2e-3).epsilon(1e-6));
}

TEST_CASE("pipeline: schedules that cannot run are refused with the reason") {
  PipelineSpec s;
  s.gpus = {0};
  s.microbatches = 4;
  s.activation_bytes = 1;
  CHECK_THROWS_WITH_AS(pipeline_program(s), doctest::Contains("at least 2 stages"), UsageError);
  s.gpus = {0, 1};
  s.microbatches = 0;
  CHECK_THROWS_WITH_AS(pipeline_program(s), doctest::Contains("--microbatches"), UsageError);
  CHECK_THROWS_WITH_AS(parse_framework("jax"), doctest::Contains("valid: nccl, torch"), UsageError);
  CHECK_THROWS_WITH_AS(parse_coll_op("allreduce"), doctest::Contains("valid: all_reduce"), UsageError);
}

TEST_CASE("weight sync: the copy engine pulls every tensor to every rollout GPU") {
  const auto t =
      tiny("\tGPU0\tGPU1\tGPU2\nGPU0\t X \tNV6\tNV6\nGPU1\tNV6\t X \tNV6\nGPU2\tNV6\tNV6\t X \n", "A100");
  const auto model = models::make_transfer_model("ideal", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  // Direct NVLink bundles: each rollout GPU has its own bundle from the trainer, so pushing 2 tensors of S/2
  // to each of 2 GPUs takes S / (bundle bandwidth).
  const double bundle = t.gpus[0].nvlink_bandwidth / 2;
  const Program p = copy_engine_program(0, {1, 2}, {500'000'000, 500'000'000}, 2);
  CHECK(once(rt, p) == doctest::Approx(1e9 / bundle).epsilon(1e-3));
  CHECK_THROWS_WITH_AS(copy_engine_program(0, {0, 1}, {1}, 1), doctest::Contains("trainer GPU 0 itself"),
                       UsageError);
}

TEST_CASE(
    "pipeline: interleaved 1F1B with negligible communication shrinks the bubble to (P - 1) x (F + B) / V") {
  const auto t = tiny(
      "\tGPU0\tGPU1\tGPU2\tGPU3\nGPU0\t X \tNV4\tNV4\tNV4\nGPU1\tNV4\t X \tNV4\tNV4\n"
      "GPU2\tNV4\tNV4\t X \tNV4\nGPU3\tNV4\tNV4\tNV4\t X \n",
      "H100");
  const auto model = models::make_transfer_model("ideal", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  for (int stages : {2, 4}) {
    for (int chunks : {2, 3}) {
      for (ExchangeMode mode : {ExchangeMode::Sequential, ExchangeMode::Overlapped, ExchangeMode::Batched}) {
        PipelineSpec s;
        for (int g = 0; g < stages; ++g) s.gpus.push_back(g);
        s.microbatches = 2 * stages;
        s.activation_bytes = 1;
        s.fwd = 300'000'000;  // 300 us per stage, split over the chunks
        s.bwd = 600'000'000;
        s.mode = mode;
        s.chunks = chunks;
        const std::string what = std::to_string(stages) + " stages, " + std::to_string(chunks) + " chunks, " +
                                 exchange_mode_name(mode);
        CAPTURE(what);
        const double expected = (s.microbatches * 900e-6) + (stages - 1) * 900e-6 / chunks;
        CHECK(once(rt, pipeline_program(s)) == doctest::Approx(expected).epsilon(2e-3));
      }
    }
  }
  PipelineSpec bad;
  bad.gpus = {0, 1, 2, 3};
  bad.microbatches = 6;
  bad.activation_bytes = 1;
  bad.chunks = 2;
  CHECK_THROWS_WITH_AS(pipeline_program(bad), doctest::Contains("multiple of the stages"), UsageError);
}

namespace {

/// Two HGX H100 machines on a rail-optimised fabric.
topo::Topology two_hgx() {
  topo::Diagnostics diag;
  return topo::load_whatif(R"(
[[nodes]]
count = 2
preset = "hgx-h100"
[fabric]
kind = "infiniband"
rails = 8
nodes_per_leaf = 1
)",
                           "two.toml", ".", {}, diag, models::HardwareCatalog::builtin());
}

/// `p` with every launch standing for every rank written out as one launch (or kernel) per rank, as the
/// workloads built them before LaunchSpec::thread_per_rank existed.
Program expanded(const Program& p) {
  Program q = p;
  q.launches.clear();
  for (const LaunchSpec& l : p.launches) {
    const std::vector<int>& gpus = p.comms.at(static_cast<std::size_t>(l.kernels.front().comm)).gpus;
    if (l.thread_per_rank) {
      for (std::size_t r = 0; r < gpus.size(); ++r) {
        KernelSpec k = l.kernels.front();
        k.every_rank = false;
        k.gpu = gpus[r];
        q.launches.push_back({l.thread + static_cast<int>(r), {k}, l.framework_calls});
      }
      continue;
    }
    LaunchSpec e{l.thread, {}, l.framework_calls};
    for (const KernelSpec& k : l.kernels) {
      if (!k.every_rank) {
        e.kernels.push_back(k);
        continue;
      }
      for (int g : gpus) {
        KernelSpec one = k;
        one.every_rank = false;
        one.gpu = g;
        e.kernels.push_back(one);
      }
    }
    q.launches.push_back(std::move(e));
  }
  return q;
}

void check_same_run(Runtime& rt, Program compact) {
  compact.warmup = 1;
  compact.iterations = 2;
  const Program full = expanded(compact);
  REQUIRE(full.launches.size() >= compact.launches.size());
  const RunResult a = rt.run(compact), b = rt.run(full);
  CHECK(a.per_iteration == b.per_iteration);
  CHECK(a.iteration_end == b.iteration_end);
  CHECK(a.issue_end == b.issue_end);
  CHECK(a.iteration_start == b.iteration_start);
  CHECK(a.events == b.events);
  CHECK(a.flows == b.flows);
  REQUIRE(a.collectives.size() == b.collectives.size());
  for (std::size_t i = 0; i < a.collectives.size(); ++i) {
    CHECK(a.collectives[i].start == b.collectives[i].start);
    CHECK(a.collectives[i].end == b.collectives[i].end);
  }
  REQUIRE(a.busy.size() == b.busy.size());
  for (const auto& [gpu, busy] : a.busy) {
    CAPTURE(gpu);
    CHECK(busy.transfer == b.busy.at(gpu).transfer);
  }
}

}  // namespace

TEST_CASE("runtime: a launch standing for every rank runs exactly as one launch per rank") {
  const topo::Topology t = two_hgx();
  const auto model = models::make_transfer_model("nccl", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  const std::vector<std::uint64_t> pieces{1 << 20, 64 << 20, 4 << 10, 64 << 20};
  const std::vector<std::vector<int>> groups{{0, 8, 9, 10}, {1, 2, 11, 12, 13}};
  SUBCASE("one thread per rank (groups across machines)") {
    check_same_run(rt, broadcast_pieces_program(groups, pieces, Framework::Nccl, true));
  }
  SUBCASE("PyTorch: the NCCL stream waits for the compute stream") {
    check_same_run(rt, broadcast_pieces_program(groups, pieces, Framework::Torch, true));
  }
  SUBCASE("one thread per group, driving every rank") {
    check_same_run(rt,
                   broadcast_pieces_program({{0, 1, 2, 3}, {4, 5, 6, 7}}, pieces, Framework::Nccl, false));
  }
  SUBCASE("gradient all-reduce buckets") {
    check_same_run(rt, grad_sync_program({0, 3, 8, 15}, pieces, Framework::Torch));
  }
}

TEST_CASE("runtime: a kernel of every rank must be a collective, alone in a launch per rank") {
  const topo::Topology t = two_hgx();
  const auto model = models::make_transfer_model("nccl", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  Program p = broadcast_pieces_program(std::vector<int>{0, 8}, {1024}, Framework::Nccl, true);
  p.launches.front().kernels.push_back(p.launches.front().kernels.front());
  CHECK_THROWS_WITH_AS(rt.run(p), doctest::Contains("exactly one kernel of every rank"), UsageError);
  Program q = broadcast_pieces_program(std::vector<int>{0, 8}, {1024}, Framework::Nccl, false);
  q.launches.front().kernels.front().collective.reset();
  q.launches.front().kernels.front().ops.push_back({OpSpec::Kind::Send, 8, 1024});
  CHECK_THROWS_WITH_AS(rt.run(q), doctest::Contains("must be a collective"), UsageError);
}

TEST_CASE("runtime: routes between machines, composed from per-GPU pieces, are Topology::route's") {
  const topo::Topology t = two_hgx();
  const auto model = models::make_transfer_model("nccl", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  for (const topo::GpuInfo& a : t.gpus) {
    for (const topo::GpuInfo& b : t.gpus) {
      if (a.node == b.node) continue;
      CAPTURE(a.name);
      CAPTURE(b.name);
      const topo::Route r = t.route(a.vertex, b.vertex);
      const models::PairInfo& p = rt.pair(a.index, b.index);
      CHECK(p.path_latency == r.latency);
      CHECK(p.route_bandwidth == r.bandwidth);
      CHECK_FALSE(p.same_node);
    }
  }
}

namespace {

/// Two HGX H100 machines on NDR (400 Gb/s = 50 GB/s per NIC) keeping only some NICs (`overrides`: a
/// [nodes.overrides] line), one rail per kept NIC.
topo::Topology two_hgx_with(const std::string& overrides, int rails) {
  topo::Diagnostics diag;
  return topo::load_whatif("[[nodes]]\ncount = 2\npreset = \"hgx-h100\"\n[nodes.overrides]\n" + overrides +
                               "\n[fabric]\nkind = \"infiniband\"\nlink_bandwidth = \"400Gbps\"\nrails = " +
                               std::to_string(rails) + "\n",
                           "few.toml", ".", {}, diag, models::HardwareCatalog::builtin());
}

std::vector<int> all_gpus(const topo::Topology& t) {
  std::vector<int> g;
  for (const topo::GpuInfo& gpu : t.gpus) g.push_back(gpu.index);
  return g;
}

}  // namespace

TEST_CASE("runtime: an all-reduce across two HGX machines with m NICs each takes 2(n-1)/n S / (m x NIC)") {
  // Ideal model: the NICs are the only bottleneck when every ring enters and leaves through the NIC it uses
  // (PXN closes it over NVLink), on its own rail, and each NIC carries the same rings.
  const auto model = models::make_transfer_model("ideal", models::ModelParams::defaults(), {});
  const std::uint64_t s = 1ULL << 30;
  const double nic = 400e9 / 8;
  for (const auto& [overrides, m] : std::vector<std::pair<std::string, int>>{{"nics = 1", 1},
                                                                             {"nics = 2", 2},
                                                                             {"nics = 3", 3},
                                                                             {"nics = 4", 4},
                                                                             {"use_nics = [0, 2, 4, 6]", 4},
                                                                             {"use_nics = [2, 3]", 2}}) {
    CAPTURE(overrides);
    const topo::Topology t = two_hgx_with(overrides, m);
    Runtime rt(t, *model);
    CHECK(once(rt, collective_program(all_gpus(t), models::CollOp::AllReduce, s)) ==
          doctest::Approx(2.0 * 15 / 16 * static_cast<double>(s) / (m * nic)).epsilon(1e-6));
  }
}

TEST_CASE("runtime: rings cross machines only through the GPU beside each kept NIC, never through a CPU") {
  // NICs 2 and 3 kept: on GPU 2's and GPU 3's PCIe switches. GPUs 0 and 1 reach them too, but only through
  // their host bridges and the CPU (NCCL's PHB, ranked after PIX and PXN): they stay inside the ring.
  const topo::Topology t = two_hgx_with("use_nics = [2, 3]", 2);
  const auto model = models::make_transfer_model("ideal", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  Program p = collective_program(all_gpus(t), models::CollOp::AllReduce, 1ULL << 30);
  p.warmup = 0;
  p.iterations = 1;
  Trace trace;
  rt.run(p, &trace);
  std::set<std::string> busy;
  const nlohmann::json doc = trace.to_json();
  for (const auto& e : doc["traceEvents"]) {
    if (e.value("ph", "") == "C" && e["args"]["utilisation_percent"].get<double>() > 0)
      busy.insert(e["name"].get<std::string>());
  }
  for (const std::string& link : busy) {
    CAPTURE(link);
    CHECK(link.find("hostbridge") == std::string::npos);
    CHECK(link.find("cpu") == std::string::npos);
    CHECK(link.find("spine") == std::string::npos);  // same rail on both machines
  }
  for (const char* link :
       {"n0/NIC2->leaf.r0.0", "n0/NIC3->leaf.r1.0", "leaf.r0.0->n1/NIC2", "leaf.r1.0->n1/NIC3"}) {
    CAPTURE(link);
    CHECK(busy.count(link) == 1);
  }
}
