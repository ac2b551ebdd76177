// Google Benchmark: simulator speed on the workloads the speed goals name (see sim/README.md for results).
#include <benchmark/benchmark.h>

#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "commsim/models/params.hpp"
#include "commsim/models/transfer.hpp"
#include "commsim/sim/runtime.hpp"
#include "commsim/sim/workloads.hpp"
#include "commsim/topo/load.hpp"
#include "reference_flow_network.hpp"  // sim/engine/tests: the whole-network solver issue 17 replaced

using namespace commsim;
using commsim::sim::EventQueue;

namespace {

topo::Topology load(const std::string& rel, const std::string& gpu = "") {
  topo::Diagnostics diag;
  return topo::load_topology(std::string(COMMSIM_SOURCE_DIR) + "/" + rel, {gpu, ""}, diag);
}

/// `commsim simulate p2p --pairs all` over 1 B .. 1 GiB (56 pairs x 31 sizes) on HGX H100, as the CLI runs
/// it.
void BM_P2pAllPairsHgxH100(benchmark::State& state) {
  const auto t = load("topologies/library/real/hgx-h100.topo", "H100");
  const auto model = models::make_transfer_model("nccl", models::ModelParams::defaults(), {});
  const auto sizes = size_sweep(1, 1ULL << 30, 2);
  std::uint64_t events = 0, runs = 0;
  for (auto _ : state) {
    sim::Runtime rt(t, *model);
    for (int a = 0; a < 8; ++a) {
      for (int b = 0; b < 8; ++b) {
        if (a == b) continue;
        for (auto bytes : sizes) {
          events += rt.run(sim::p2p_program(a, b, bytes)).events;
          ++runs;
        }
      }
    }
  }
  state.counters["runs"] = benchmark::Counter(static_cast<double>(runs), benchmark::Counter::kAvgIterations);
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_P2pAllPairsHgxH100)->Unit(benchmark::kMillisecond);

/// Contention-heavy: on two HGX H100 nodes, every GPU sends to every other GPU in one group (an all-to-all
/// made of send/recv): 240 transfers of many channels share NVSwitch ports, PCIe switches, NICs and leaf
/// switches.
/// Arg 0: bytes per transfer; arg 1: 0 builds a Runtime per run (routes, link table: set-up included), 1
/// builds it once and runs the program again each iteration (the engine's steady state, as a sweep reuses
/// it).
void BM_ContentionAllToAll16(benchmark::State& state) {
  const auto t = load("topologies/library/whatif/hgx-h100-2nodes-ndr.toml");
  const auto model = models::make_transfer_model("nccl", models::ModelParams::defaults(), {});
  const std::uint64_t bytes = static_cast<std::uint64_t>(state.range(0));
  const bool reuse = state.range(1) != 0;
  sim::Program p;
  std::vector<int> all;
  for (int g = 0; g < 16; ++g) all.push_back(g);
  p.comms.push_back({all});
  sim::LaunchSpec launch;
  for (int g = 0; g < 16; ++g) {
    sim::KernelSpec k = sim::p2p_kernel(g, 0, 0, {}, "alltoall");
    for (int peer = 0; peer < 16; ++peer) {
      if (peer == g) continue;
      k.ops.push_back({sim::OpSpec::Kind::Send, peer, bytes});
      k.ops.push_back({sim::OpSpec::Kind::Recv, peer, bytes});
    }
    launch.kernels.push_back(k);
  }
  p.launches.push_back(launch);
  p.warmup = 0;
  p.iterations = 1;
  std::uint64_t events = 0, flows = 0, classes = 0, solved = 0, recomputations = 0, steps = 0;
  std::optional<sim::Runtime> shared;
  if (reuse) shared.emplace(t, *model);
  for (auto _ : state) {
    std::optional<sim::Runtime> own;
    if (!reuse) own.emplace(t, *model);
    const auto r = (reuse ? *shared : *own).run(p);
    events += r.events;
    flows += r.flows;
    classes += r.flow_classes;
    solved += r.solved_flows;
    recomputations += r.recomputations;
    steps += r.chunk_steps;
  }
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  // What a chunk-level engine would have handled: every event, with each send/recv channel part's flow (one
  // completion here) counted as the NCCL chunk steps it stands for.
  state.counters["chunk-level events/s"] =
      benchmark::Counter(static_cast<double>(events + steps - flows), benchmark::Counter::kIsRate);
  state.counters["steps"] =
      benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kAvgIterations);
  state.counters["flows"] =
      benchmark::Counter(static_cast<double>(flows), benchmark::Counter::kAvgIterations);
  // After coalescing identical flows, and the weighted flows the incremental solver re-solved per instant.
  state.counters["flow_classes"] =
      benchmark::Counter(static_cast<double>(classes), benchmark::Counter::kAvgIterations);
  state.counters["solved/instant"] = benchmark::Counter(
      recomputations > 0 ? static_cast<double>(solved) / static_cast<double>(recomputations) : 0.0);
}
BENCHMARK(BM_ContentionAllToAll16)
    ->ArgNames({"bytes", "reuse"})
    ->Args({1 << 20, 0})
    ->Args({64 << 20, 0})
    ->Args({1 << 20, 1})
    ->Args({64 << 20, 1})
    ->Unit(benchmark::kMillisecond);

/// The flow engine alone, where work in proportion to what changes pays: 400 links, each crossed by 16 flows
/// of different sizes (one rank's sends on its own NIC, say), and every 8th flow also crossing a second,
/// shared link, so components are small but not trivial. 6,400 flows end at ~6,000 distinct instants: the
/// whole-network solver re-solves every active flow at each, the incremental one only the flows sharing links
/// with the one that ended. Arg 1 is the incremental FlowNetwork, 0 the reference.
template <class Net>
std::uint64_t churn(std::uint64_t& solved) {
  EventQueue q;
  Net net(q);
  std::vector<std::vector<int>> paths;
  std::vector<int> links;
  for (int i = 0; i < 400; ++i) links.push_back(net.add_resource(50e9, ""));
  std::vector<int> shared;
  for (int i = 0; i < 50; ++i) shared.push_back(net.add_resource(400e9, ""));
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> bytes(1e6, 64e6);
  for (int i = 0; i < 400; ++i) {
    for (int k = 0; k < 16; ++k) {
      paths.push_back(k % 8 == 0 ? std::vector<int>{links[i], shared[i / 8]} : std::vector<int>{links[i]});
    }
  }
  std::uint64_t done = 0;
  for (std::size_t f = 0; f < paths.size(); ++f) net.start_on(paths[f], bytes(rng), 0, [&done] { ++done; });
  const std::uint64_t events = q.run();
  solved = 0;
  if constexpr (std::is_same_v<Net, sim::FlowNetwork>) solved = net.solved_flows();
  benchmark::DoNotOptimize(done);
  return events;
}

void BM_FlowChurn(benchmark::State& state) {
  std::uint64_t events = 0, solved = 0, s = 0;
  for (auto _ : state) {
    events += state.range(0) ? churn<sim::FlowNetwork>(s) : churn<sim::reference::ReferenceFlowNetwork>(s);
    solved += s;
  }
  state.SetLabel(state.range(0) ? "incremental" : "whole-network reference");
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  if (solved > 0) {
    state.counters["solved/event"] =
        benchmark::Counter(static_cast<double>(solved) / static_cast<double>(events));
  }
}
BENCHMARK(BM_FlowChurn)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
