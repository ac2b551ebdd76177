// Runtime tests on tiny topologies: closed-form transfer times, exchange modes, deadlock reports, traces.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "commsim/core/error.hpp"
#include "commsim/models/transfer.hpp"
#include "commsim/sim/runtime.hpp"
#include "commsim/sim/schedules.hpp"
#include "commsim/sim/workloads.hpp"
#include "tiny_topology.hpp"

using namespace commsim;
using namespace commsim::sim;
using commsim::sim::testing::kBridge;
using commsim::sim::testing::kBridgeBw;
using commsim::sim::testing::tiny;

TEST_CASE("runtime: under the ideal model one send takes latency + bytes / link bandwidth") {
  const auto t = tiny(kBridge, "A6000");
  const auto model = models::make_transfer_model("ideal", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  Program p = p2p_program(0, 1, 1'000'000'000);
  p.warmup = 0;
  p.iterations = 1;
  const RunResult r = rt.run(p, nullptr, {.op_records = 1});
  const double expected_s = 1e9 / (4 * 14.0625e9) + 0.15e-6;  // NVLink bundle: one hop of 0.15 us
  CHECK(static_cast<double>(r.per_iteration) / 1e12 == doctest::Approx(expected_s).epsilon(1e-9));
  REQUIRE(r.ops.size() == 1);
  CHECK(r.ops[0].transport == models::Transport::P2p);
}

TEST_CASE(
    "runtime: full duplex makes an overlapped exchange as fast as one direction, sequential twice as slow") {
  const auto t = tiny(kBridge, "A6000");
  const auto model = models::make_transfer_model("ideal", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  auto time = [&](ExchangeMode m) {
    Program p = exchange_program(0, 1, m, 1'000'000'000);
    p.warmup = 0;
    p.iterations = 1;
    return static_cast<double>(rt.run(p).per_iteration);
  };
  const double one_way = 1e9 / (4 * 14.0625e9) * 1e12;
  CHECK(time(ExchangeMode::Overlapped) == doctest::Approx(one_way).epsilon(1e-4));
  CHECK(time(ExchangeMode::Batched) == doctest::Approx(one_way).epsilon(1e-4));
  CHECK(time(ExchangeMode::Sequential) == doctest::Approx(2 * one_way).epsilon(1e-4));
}

TEST_CASE("runtime: nccl-tests timing averages the host threads' own ends, one thread times every GPU") {
  // Three GPUs, each pair joined by two NVLinks: GPU 0 sends 1 GB to GPU 1 (threads 0 and 1), GPU 2 runs a 1
  // us compute kernel (thread 2). nccl-tests (-t 3) averages the threads' times: (T + T + 1 us) / 3.
  const auto t =
      tiny("\tGPU0\tGPU1\tGPU2\nGPU0\t X \tNV2\tNV2\nGPU1\tNV2\t X \tNV2\nGPU2\tNV2\tNV2\t X \n", "A6000");
  const auto model = models::make_transfer_model("ideal", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  const Picoseconds compute = 1'000'000;
  auto program = [&](bool mean, bool one_thread) {
    Program p;
    p.comms.push_back({{0, 1, 2}});
    p.warmup = 0;
    p.iterations = 1;
    p.mean_over_threads = mean;
    KernelSpec c;
    c.gpu = 2;
    c.compute = compute;
    c.name = "compute";
    std::vector<KernelSpec> k{p2p_kernel(0, 0, 0, {{OpSpec::Kind::Send, 1, 1'000'000'000}}, "send"),
                              p2p_kernel(1, 0, 0, {{OpSpec::Kind::Recv, 0, 1'000'000'000}}, "recv"), c};
    if (one_thread) {
      p.launches.push_back({0, k});
    } else {
      for (int i = 0; i < 3; ++i) p.launches.push_back({i, {k[static_cast<std::size_t>(i)]}});
    }
    return p;
  };
  const Picoseconds slowest = rt.run(program(false, false)).per_iteration;
  const Picoseconds transfer = static_cast<Picoseconds>(1e9 / (2 * 14.0625e9) * 1e12);
  CHECK(static_cast<double>(slowest) == doctest::Approx(static_cast<double>(transfer)).epsilon(1e-3));
  const Picoseconds mean = rt.run(program(true, false)).per_iteration;
  CHECK(static_cast<double>(mean) ==
        doctest::Approx(static_cast<double>(2 * slowest + compute) / 3.0).epsilon(1e-9));
  // One thread drives all three GPUs (-g 3): its clock stops at the last of them.
  CHECK(rt.run(program(true, true)).per_iteration == slowest);
}

TEST_CASE("runtime: back-to-back iterations are paced by the host when kernels are short") {
  const auto t = tiny(kBridge, "A6000");
  const auto model = models::make_transfer_model("nccl", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  // nccl-tests -g 2: one thread launches both GPUs, 4 operations: launch_base + 2 launch_per_gpu + 4
  // launch_per_op.
  const auto& p = models::ModelParams::defaults();
  const RunResult r = rt.run(sendrecv_program({0, 1}, 8));
  CHECK(r.per_iteration == p.launch_base + 2 * p.launch_per_gpu + 4 * p.launch_per_op);
}

TEST_CASE("runtime: a send without a receive is reported, not hung") {
  const auto t = tiny(kBridge, "A6000");
  const auto model = models::make_transfer_model("nccl", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  Program p;
  p.comms.push_back({{0, 1}});
  p.launches.push_back({0, {p2p_kernel(0, 0, 0, {{OpSpec::Kind::Send, 1, 1024}}, "lonely send")}});
  CHECK_THROWS_WITH_AS(rt.run(p),
                       doctest::Contains("GPU 0 stream 0 'lonely send' (iteration 0) waits for GPU 1"),
                       SimulationError);
}

TEST_CASE("runtime: mismatched sizes and unknown GPUs are errors") {
  const auto t = tiny(kBridge, "A6000");
  const auto model = models::make_transfer_model("nccl", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  Program p;
  p.comms.push_back({{0, 1}});
  p.launches.push_back({0, {p2p_kernel(0, 0, 0, {{OpSpec::Kind::Send, 1, 1024}}, "send")}});
  p.launches.push_back({1, {p2p_kernel(1, 0, 0, {{OpSpec::Kind::Recv, 0, 2048}}, "recv")}});
  CHECK_THROWS_WITH_AS(rt.run(p), doctest::Contains("which expects 2048"), SimulationError);
  CHECK_THROWS_AS(rt.run(p2p_program(0, 7, 8)), UsageError);
}

TEST_CASE("runtime: posts waiting on one (communicator, src, dst) match oldest first") {
  const auto t = tiny(kBridge, "A6000");
  const auto model = models::make_transfer_model("nccl", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  // Three sends wait on one key (the first in the table, the later two in its queue) before any receive.
  auto program = [](std::vector<std::uint64_t> recv_sizes) {
    Program p;
    p.comms.push_back({{0, 1}});
    p.warmup = 0;
    p.iterations = 1;
    std::vector<OpSpec> sends, recvs;
    for (std::uint64_t b : {1024, 2048, 4096}) sends.push_back({OpSpec::Kind::Send, 1, b});
    for (std::uint64_t b : recv_sizes) recvs.push_back({OpSpec::Kind::Recv, 0, b});
    p.launches.push_back({0, {p2p_kernel(0, 0, 0, sends, "sends")}});
    p.launches.push_back({1, {p2p_kernel(1, 0, 0, recvs, "recvs")}});
    return p;
  };
  const RunResult r = rt.run(program({1024, 2048, 4096}), nullptr, {.op_records = kAllOpRecords});
  REQUIRE(r.ops.size() == 3);
  CHECK(r.ops[0].bytes == 1024);
  CHECK(r.ops[1].bytes == 2048);
  CHECK(r.ops[2].bytes == 4096);
  CHECK_THROWS_WITH_AS(rt.run(program({2048, 1024, 4096})), doctest::Contains("which expects 2048"),
                       SimulationError);
  // Two of them matched, the third waits: the report names it.
  CHECK_THROWS_WITH_AS(rt.run(program({1024, 2048})),
                       doctest::Contains("'sends' (iteration 0) waits for GPU 1"), SimulationError);
}

TEST_CASE("runtime: transfer records are kept only when asked, the first ones to start") {
  const auto t = tiny(kBridge, "A6000");
  const auto model = models::make_transfer_model("nccl", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  const Program p = sendrecv_program({0, 1}, 1 << 20);  // two transfers an iteration, 0 -> 1 and 1 -> 0
  const RunResult none = rt.run(p);
  const RunResult first = rt.run(p, nullptr, {.op_records = 1});
  const RunResult all = rt.run(p, nullptr, {.op_records = kAllOpRecords});
  CHECK(none.ops.empty());
  REQUIRE(first.ops.size() == 1);
  REQUIRE(all.ops.size() == 2);
  CHECK(first.ops[0].src == all.ops[0].src);
  CHECK(first.ops[0].dst == all.ops[0].dst);
  CHECK(first.ops[0].start == all.ops[0].start);
  CHECK(first.ops[0].end == all.ops[0].end);
  CHECK(all.ops[0].end > all.ops[0].start);
  CHECK(all.ops[0].src != all.ops[1].src);
  // Records change nothing else.
  CHECK(none.per_iteration == all.per_iteration);
  CHECK(none.iteration_end == all.iteration_end);
  CHECK(none.events == all.events);
}

TEST_CASE("runtime: a pair's facts are found again by its GPUs, an unknown GPU is refused") {
  const auto t = tiny(kBridge, "A6000");  // a few GPUs: pairs in the dense table
  const auto model = models::make_transfer_model("nccl", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  const models::PairInfo& a = rt.pair(0, 1);
  const models::PairInfo& b = rt.pair(1, 0);
  CHECK(&rt.pair(0, 1) == &a);
  CHECK(&rt.pair(1, 0) == &b);
  const int n = static_cast<int>(t.gpus.size());
  CHECK_THROWS(rt.pair(0, n));
  CHECK_THROWS(rt.pair(n, 0));
  CHECK_THROWS(rt.pair(-1, 0));
  CHECK(&rt.pair(0, 1) == &a);
}

TEST_CASE("runtime: without P2P and SHM a machine with no NIC has no transport") {
  const auto t = tiny(kBridge, "A6000");
  const auto env = models::NcclEnv::parse({"NCCL_P2P_DISABLE=1", "NCCL_SHM_DISABLE=1"});
  const auto model = models::make_transfer_model("nccl", models::ModelParams::defaults(), env);
  Runtime rt(t, *model);
  CHECK_THROWS_WITH_AS(rt.run(p2p_program(0, 1, 1024)), doctest::Contains("has no NIC"), SimulationError);
}

TEST_CASE("runtime: the trace has kernel spans per GPU and link counters, in trace-event form") {
  const auto t = tiny(kBridge, "A6000");
  const auto model = models::make_transfer_model("nccl", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  Trace trace;
  rt.run(sendrecv_program({0, 1}, 1 << 20), &trace);
  const auto j = trace.to_json();
  REQUIRE(j.contains("traceEvents"));
  int spans = 0, counters = 0, names = 0;
  for (const auto& e : j["traceEvents"]) {
    REQUIRE(e.contains("ph"));
    REQUIRE(e.contains("pid"));
    const std::string ph = e["ph"];
    if (ph == "X") {
      ++spans;
      CHECK(e["dur"].get<double>() >= 0);
      CHECK(e.contains("ts"));
      CHECK(e.contains("tid"));
    } else if (ph == "C") {
      ++counters;
      CHECK(e["args"]["utilisation_percent"].get<double>() >= 0);
      CHECK(e["args"]["utilisation_percent"].get<double>() <= 100.0 + 1e-9);
    } else if (ph == "M") {
      ++names;
    }
  }
  CHECK(spans >= 8);  // 4 iterations x 2 GPUs, plus transfers
  CHECK(counters > 0);
  CHECK(names >= 3);
}

TEST_CASE("runtime: a set cancel flag stops a run with Interrupted, progress reports the simulated time") {
  const auto t = tiny(kBridge, "A6000");
  const auto model = models::make_transfer_model("ideal", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  Program p = p2p_program(0, 1, 1'000'000'000);
  std::atomic<bool> cancel{false};
  std::vector<RunProgress> seen;
  RunHooks hooks;
  hooks.cancel = &cancel;
  hooks.progress = [&](const RunProgress& pr) { seen.push_back(pr); };
  hooks.progress_interval_s = 0;
  rt.set_hooks(hooks);
  const RunResult full = rt.run(p);  // not cancelled: the same result as without hooks
  Runtime plain(t, *model);
  CHECK(full.per_iteration == plain.run(p).per_iteration);
  REQUIRE_FALSE(seen.empty());
  CHECK(seen.back().events <= full.events);
  cancel = true;
  CHECK_THROWS_AS(rt.run(p), Interrupted);
}

namespace {

/// Four H200s on one NVSwitch (the h200x4 matrix); `down` >= 0 has every NVLink <inactive> in nvlink -s.
topo::Topology h200x4(int down) {
  const char* matrix =
      "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\n"
      "GPU0\t X \tNV18\tNV18\tNV18\t0-63\t0\nGPU1\tNV18\t X \tNV18\tNV18\t0-63\t0\n"
      "GPU2\tNV18\tNV18\t X \tNV18\t0-63\t0\nGPU3\tNV18\tNV18\tNV18\t X \t0-63\t0\n";
  std::string status;
  for (int g = 0; g < 4; ++g) {
    status += "GPU " + std::to_string(g) + ": NVIDIA H200 (UUID: GPU-" + std::to_string(g) + ")\n";
    for (int l = 0; l < 18; ++l)
      status += "\t Link " + std::to_string(l) + ": " + (g == down ? "<inactive>" : "26.562 GB/s") + "\n";
  }
  const topo::NvlinkStatus nv = topo::parse_nvlink_status(status, "h200x4.nvlink");
  topo::Topology t;
  topo::Diagnostics diag;
  topo::NodeBuildOptions o;
  o.nvlink = &nv;
  topo::add_matrix_node(t, topo::parse_topo_matrix(matrix, "h200x4.topo"), o,
                        models::HardwareCatalog::builtin(), diag);
  return t;
}

Picoseconds one_send(const topo::Topology& t, int src, int dst, std::uint64_t bytes,
                     models::Transport* transport = nullptr) {
  const auto model = models::make_transfer_model("ideal", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  Program p = p2p_program(src, dst, bytes);
  p.warmup = 0;
  p.iterations = 1;
  const RunResult r = rt.run(p, nullptr, {.op_records = 1});
  if (transport) *transport = r.ops.at(0).transport;
  return r.per_iteration;
}

}  // namespace

TEST_CASE("runtime: a GPU with every NVLink inactive is reached through host memory, other pairs unchanged") {
  const auto& hw = models::HardwareCatalog::builtin();
  const auto& lat = hw.latency();
  const topo::Topology broken = h200x4(2), healthy = h200x4(-1);
  const std::uint64_t bytes = 1'000'000'000;
  // NVLink pairs: two NVSwitch hops, 18 links of 25 GB/s, exactly as on the healthy machine.
  models::Transport tr{};
  const double nvl_s = 2 * static_cast<double>(lat.nvswitch) / 1e12 + 1e9 / (18 * 25e9);
  for (auto [a, b] : {std::pair{0, 1}, std::pair{3, 0}, std::pair{1, 3}}) {
    CAPTURE(a);
    CAPTURE(b);
    CHECK(static_cast<double>(one_send(broken, a, b, bytes, &tr)) / 1e12 ==
          doctest::Approx(nvl_s).epsilon(1e-9));
    CHECK(tr == models::Transport::P2p);
    CHECK(one_send(broken, a, b, bytes) == one_send(healthy, a, b, bytes));
  }
  // GPU2: NODE (NCCL's PHB), so SHM through the CPU: PCIe up, the host bridges, PCIe down; the slowest of
  // a Gen5 x16 port and the root complex sets the rate.
  const double pcie_s =
      (2 * static_cast<double>(lat.pcie + lat.pcie_switch) + 2 * static_cast<double>(lat.host_bridge)) /
          1e12 +
      1e9 / std::min(hw.pcie_bandwidth(5, 16), hw.host().root_complex_bandwidth);
  for (auto [a, b] : {std::pair{0, 2}, std::pair{2, 3}}) {
    CAPTURE(a);
    CAPTURE(b);
    CHECK(static_cast<double>(one_send(broken, a, b, bytes, &tr)) / 1e12 ==
          doctest::Approx(pcie_s).epsilon(1e-9));
    CHECK(tr == models::Transport::Shm);
  }
}

TEST_CASE("runtime: SHM transfers through one CPU share its host memory, a GPU's own limit still applies") {
  // Every pair through host memory (NCCL_P2P_DISABLE=1). Channels fast enough that only the per-GPU SHM
  // limit (30 GB/s) and the CPU's memory (60 GB/s of SHM data) can bind: a 4-GPU ring moves 4 flows through
  // that memory, 15 GB/s each, half the per-GPU rate; 2 GPUs (2 flows, 30 GB/s each) are not limited by it.
  const topo::Topology t = h200x4(-1);
  const auto env = models::NcclEnv::parse({"NCCL_P2P_DISABLE=1"});
  auto period = [&](std::vector<int> gpus, double host) {
    models::ModelParams p = models::ModelParams::defaults();
    p.shm_bandwidth = 30e9;
    p.shm_channel_bandwidth = 100e9;
    p.shm_host_memory_bandwidth = host;
    const auto model = models::make_transfer_model("nccl", p, env);
    Runtime rt(t, *model);
    Program prog = sendrecv_program(gpus, std::uint64_t{1} << 30);
    prog.warmup = 0;
    prog.iterations = 1;
    return static_cast<double>(rt.run(prog).per_iteration) / 1e12;
  };
  const double gib = static_cast<double>(std::uint64_t{1} << 30);
  const double free4 = period({0, 1, 2, 3}, 0), shared4 = period({0, 1, 2, 3}, 60e9);
  CHECK(free4 == doctest::Approx(gib / 30e9).epsilon(0.02));
  CHECK(shared4 == doctest::Approx(gib / 15e9).epsilon(0.02));
  CHECK(period({0, 1}, 60e9) == period({0, 1}, 0));
}

TEST_CASE(
    "runtime: inside a CUDA graph the host paces nothing, kernels follow at the graph gap, one thread "
    "joins") {
  const auto t = tiny(kBridge, "A6000");
  auto period = [&](Picoseconds launch_base, Picoseconds gap, Picoseconds join, bool per_gpu, bool graph) {
    models::ModelParams p = models::ModelParams::defaults();
    p.launch_base = launch_base;
    p.graph_gap = gap;
    p.graph_join = join;
    const auto model = models::make_transfer_model("nccl", p, {});
    Runtime rt(t, *model);
    Program prog = sendrecv_program({0, 1}, 8, per_gpu);
    prog.warmup = 2;
    prog.iterations = 20;
    prog.cuda_graph = graph;
    return rt.run(prog).per_iteration;
  };
  const Picoseconds slow_host = 1000 * kPicosPerMicro, us = kPicosPerMicro;
  // Launched from the host, a slow host sets the pace; inside a graph it does not count at all.
  CHECK(period(slow_host, us, 3 * us, true, false) >= slow_host);
  const Picoseconds graph = period(slow_host, us, 3 * us, true, true);
  CHECK(graph < 20 * us);
  CHECK(graph == period(0, us, 3 * us, true, true));
  // A thread per GPU: each GPU's kernels follow each other at the graph gap.
  CHECK(period(0, 2 * us, 3 * us, true, true) - graph == us);
  // One thread captured both GPUs: each kernel also waits for the other GPU's previous kernel plus the join,
  // so the join replaces the gap between the graph's 20 iterations: 19 joins (the first follows the warmup).
  CHECK(period(0, us, 3 * us, false, true) - graph == 2 * us * 19 / 20);
  CHECK(period(0, us, 5 * us, false, true) - graph == 4 * us * 19 / 20);
  // A join shorter than the gap changes nothing.
  CHECK(period(0, us, 0, false, true) == graph);
}

TEST_CASE("runtime: chunk steps count the NCCL steps of every channel part started, once per iteration") {
  const auto t = tiny(kBridge, "A6000");
  const auto model = models::make_transfer_model("nccl", models::ModelParams::defaults(), {});
  Runtime rt(t, *model);
  const std::uint64_t bytes = 64ULL << 20;
  Program p = p2p_program(0, 1, bytes);
  p.warmup = 1;
  p.iterations = 2;
  const RunResult r = rt.run(p);
  // The model's own plan of this send: its parts and their steps.
  const models::PairInfo& info = rt.pair(0, 1);
  const std::vector<models::PairInfo> pairs{info};
  const models::CommInfo comm = model->comm_info(2, 1, pairs);
  const models::TransferPlan plan = model->plan(bytes, info, comm, false);
  std::uint64_t steps = 0;
  for (const models::ChannelPart& part : plan.parts) steps += static_cast<std::uint64_t>(part.steps);
  REQUIRE(plan.parts.size() > 1);
  CHECK(steps > plan.parts.size());  // 64 MiB takes several steps on each channel
  CHECK(r.flows == 3 * plan.parts.size());
  CHECK(r.chunk_steps == 3 * steps);
}

TEST_CASE(
    "runtime: a run after others on one runtime or a destroyed one's, an interrupted one among them, matches "
    "a "
    "fresh runtime's") {
  // A runtime hands each run's flow-network memory to the next (FlowNetwork::Storage): what it hands on must
  // carry no state. Four H200s under the nccl model: a contended alltoall, a send/recv ring, an all_reduce,
  // the alltoall at another size, and a run cancelled halfway, each against its own fresh runtime.
  const auto t = h200x4(-1);
  const auto model = models::make_transfer_model("nccl", models::ModelParams::defaults(), {});
  const std::vector<int> all{0, 1, 2, 3};
  std::vector<Program> programs{alltoall_program(all, 64ULL << 20), sendrecv_program(all, 1ULL << 20),
                                collective_program(all, models::CollOp::AllReduce, 256ULL << 20),
                                alltoall_program(all, 3ULL << 20), p2p_program(0, 2, 5ULL << 20)};
  for (Program& p : programs) {
    p.warmup = 1;
    p.iterations = 2;
  }
  const auto same = [](const RunResult& a, const RunResult& b) {
    CHECK(a.per_iteration == b.per_iteration);
    CHECK(a.iteration_end == b.iteration_end);
    CHECK(a.events == b.events);
    CHECK(a.flows == b.flows);
    CHECK(a.flow_classes == b.flow_classes);
    CHECK(a.recomputations == b.recomputations);
    CHECK(a.solved_flows == b.solved_flows);
    CHECK(a.chunk_steps == b.chunk_steps);
    REQUIRE(a.ops.size() == b.ops.size());
    for (std::size_t i = 0; i < a.ops.size(); ++i) {
      CHECK(a.ops[i].start == b.ops[i].start);
      CHECK(a.ops[i].end == b.ops[i].end);
    }
  };
  // Each program's run on new memory: a Runtime in a thread of its own (a new Runtime's first run takes the
  // memory of the last Runtime its thread destroyed).
  const RunOptions records{.op_records = 64};
  std::vector<RunResult> alone(programs.size());
  for (std::size_t i = 0; i < programs.size(); ++i) {
    std::thread([&, i] { alone[i] = Runtime(t, *model).run(programs[i], nullptr, records); }).join();
  }
  Runtime reused(t, *model);
  for (std::size_t i = 0; i < programs.size(); ++i) same(reused.run(programs[i], nullptr, records), alone[i]);
  // A run cut off hands on its memory too (flow_network_test checks one cut off with flows in flight).
  std::atomic<bool> cancel{false};
  RunHooks hooks;
  hooks.cancel = &cancel;
  hooks.progress_interval_s = 0;
  hooks.progress = [&](const RunProgress&) { cancel = true; };  // stops at the next poll, 4,096 events on
  reused.set_hooks(hooks);
  Program long_run = programs[0];
  long_run.iterations = 400;
  CHECK_THROWS_AS(reused.run(long_run), Interrupted);
  reused.set_hooks({});
  for (std::size_t i = 0; i < programs.size(); ++i) same(reused.run(programs[i], nullptr, records), alone[i]);
  // A new Runtime after another was destroyed (its memory handed on through the thread), each program.
  for (std::size_t i = 0; i < programs.size(); ++i) {
    { Runtime(t, *model).run(programs[(i + 1) % programs.size()], nullptr, records); }  // then destroyed
    Runtime next(t, *model);
    same(next.run(programs[i], nullptr, records), alone[i]);
  }
}
