// The per-machine + fabric-tree router against a whole-graph Dijkstra, and the three-tier fabric.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <queue>
#include <string>
#include <vector>

#include "commsim/core/error.hpp"
#include "commsim/topo/load.hpp"
#include "commsim/topo/render.hpp"

using namespace commsim;
using namespace commsim::topo;

namespace {

Topology whatif(const std::string& text) {
  Diagnostics diag;
  return load_whatif(text, "w.toml", std::string(COMMSIM_SOURCE_DIR) + "/topologies/library/whatif", {}, diag,
                     models::HardwareCatalog::builtin());
}

/// The routing cost rule written out independently: NVLink 1, network 50, PCIe and host links 100, CPU
/// interconnect 1000 per hop.
std::int64_t cost_of(LinkKind k) {
  switch (k) {
    case LinkKind::NvLink:
      return 1;
    case LinkKind::Network:
      return 50;
    case LinkKind::Pcie:
    case LinkKind::HostLink:
      return 100;
    case LinkKind::Smp:
      return 1000;
  }
  return 0;
}

/// Reference: Dijkstra over the whole graph, GPUs never transit, routes inside one machine never touch the
/// fabric. Returns the cost to `dst` (max when unreachable).
std::int64_t reference_cost(const Topology& t, Vertex src, Vertex dst) {
  const Graph& g = t.graph();
  const bool local = g[src].node >= 0 && g[src].node == g[dst].node;
  std::vector<std::int64_t> cost(boost::num_vertices(g), std::numeric_limits<std::int64_t>::max());
  using Item = std::pair<std::int64_t, Vertex>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> q;
  cost[src] = 0;
  q.push({0, src});
  while (!q.empty()) {
    auto [c, u] = q.top();
    q.pop();
    if (c != cost[u]) continue;
    if (u != src && g[u].kind == VertexKind::Gpu) continue;
    if (local && u != src && g[u].kind == VertexKind::NetSwitch) continue;
    for (auto [e, end] = boost::out_edges(u, g); e != end; ++e) {
      const Vertex v = boost::target(*e, g);
      if (local && g[v].node != g[src].node) continue;
      if (c + cost_of(g[*e].kind) < cost[v]) {
        cost[v] = c + cost_of(g[*e].kind);
        q.push({cost[v], v});
      }
    }
  }
  return cost[dst];
}

/// Checks that `r` is a connected path from src to dst and returns its cost.
std::int64_t path_cost(const Topology& t, const Route& r, Vertex src, Vertex dst) {
  const Graph& g = t.graph();
  Vertex at = src;
  std::int64_t c = 0;
  for (const Edge& e : r.edges) {
    REQUIRE(boost::source(e, g) == at);
    at = boost::target(e, g);
    c += cost_of(g[e].kind);
  }
  CHECK(at == dst);
  return c;
}

void check_all_pairs(const Topology& t) {
  for (const GpuInfo& a : t.gpus) {
    for (const GpuInfo& b : t.gpus) {
      if (a.index == b.index) continue;
      CAPTURE(a.name);
      CAPTURE(b.name);
      const Route r = t.route(a.vertex, b.vertex);
      REQUIRE(!r.edges.empty());
      CHECK(path_cost(t, r, a.vertex, b.vertex) == reference_cost(t, a.vertex, b.vertex));
    }
    // NICs of other machines too: the fabric part alone.
    for (const NicInfo& n : t.nics) {
      const Route r = t.route(a.vertex, n.vertex);
      if (r.edges.empty()) continue;
      CHECK(path_cost(t, r, a.vertex, n.vertex) == reference_cost(t, a.vertex, n.vertex));
    }
  }
}

/// Two tiers: 4 rail-optimised HGX H100 nodes, 2 per leaf.
const char* kTwoTier = R"(
[[nodes]]
count = 4
preset = "hgx-h100"
[fabric]
kind = "infiniband"
rails = 8
nodes_per_leaf = 2
)";

/// A PCIe server (one NIC per machine in use) with fewer rails than NICs, one node per leaf, 2:1
/// oversubscribed.
const char* kPcieTwoRails = R"(
[[nodes]]
count = 3
preset = "dgx-a100"
[fabric]
kind = "infiniband"
rails = 2
nodes_per_leaf = 1
oversubscription = "2:1"
)";

const char* kThreeTier = R"(
[[nodes]]
count = 8
preset = "hgx-h100"
[fabric]
kind = "infiniband"
rails = 8
nodes_per_leaf = 2
nodes_per_pod = 4
core_oversubscription = "2:1"
)";

/// Two trees of one source alike in every field, and in the route they give to every GPU.
void check_same_tree(const Topology& t, const RouteTree& a, const RouteTree& b) {
  CHECK(a.src == b.src);
  CHECK(a.vertices == b.vertices);
  CHECK(a.via == b.via);
  CHECK(a.cost == b.cost);
  CHECK(a.via_slot == b.via_slot);
  for (const GpuInfo& gpu : t.gpus) {
    const Route x = a.to(t.graph(), gpu.vertex), y = b.to(t.graph(), gpu.vertex);
    CHECK(x.edges == y.edges);
    CHECK(x.latency == y.latency);
  }
}

}  // namespace

TEST_CASE("routing: the hierarchical router finds routes as cheap as a whole-graph Dijkstra") {
  SUBCASE("two tiers, 4 rail-optimised nodes") {
    check_all_pairs(whatif(kTwoTier));
  }
  SUBCASE("three tiers, 8 nodes in 2 pods") {
    check_all_pairs(whatif(kThreeTier));
  }
  SUBCASE("one NIC per machine, fewer rails than NICs on a PCIe server") {
    check_all_pairs(whatif(kPcieTwoRails));
  }
}

TEST_CASE("routing: three tiers put pod spines under a core with the oversubscribed uplinks") {
  const Topology t = whatif(kThreeTier);
  REQUIRE(t.fabric);
  CHECK(t.fabric->pods == 2);
  CHECK(t.fabric->core);
  // Same leaf (nodes 0 and 1, rail 0): NIC, leaf, NIC. Same pod, other leaf (node 2): up to the pod spine.
  // Other pod (node 4): through the core, whose uplink carries 16 downlinks x 50 GB/s / 2 per pod.
  const auto hops = [&](int a, int b) {
    return static_cast<int>(t.route(t.gpus[a].vertex, t.gpus[b].vertex).edges.size());
  };
  CHECK(hops(0, 8) == 6);    // GPU-pcisw-NIC-leaf-NIC-pcisw-GPU
  CHECK(hops(0, 16) == 8);   // + leaf-spine, spine-leaf
  CHECK(hops(0, 32) == 10);  // + spine-core, core-spine
  const Graph& g = t.graph();
  bool found = false;
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    if (g[boost::source(*e, g)].name == "spine.p0" && g[boost::target(*e, g)].name == "core") {
      found = true;
      CHECK(g[*e].bandwidth == doctest::Approx(4 * 8 * 50e9 / 2));  // 4 nodes x 8 rails x 400 Gb/s / 2
    }
  }
  CHECK(found);
}

TEST_CASE("routing: three-tier keys are checked") {
  CHECK_THROWS_WITH_AS(whatif(R"(
[[nodes]]
count = 4
preset = "hgx-h100"
[fabric]
kind = "infiniband"
nodes_per_leaf = 2
nodes_per_pod = 3
)"),
                       doctest::Contains("nodes_per_pod"), InputError);
  CHECK_THROWS_WITH_AS(whatif(R"(
[[nodes]]
count = 4
preset = "hgx-h100"
[fabric]
kind = "infiniband"
core_oversubscription = "2:1"
)"),
                       doctest::Contains("needs nodes_per_pod"), InputError);
}

TEST_CASE("routing: topo show lists paths from machine 0 only beyond 256 GPUs") {
  const Topology t = whatif(kThreeTier);
  const auto all = gpu_paths(t), first = gpu_paths(t, true);
  CHECK(all.size() == 64u * 63u);
  CHECK(first.size() == 8u * 63u);
  for (std::size_t i = 0; i < first.size(); ++i) {
    CHECK(first[i].src == all[i].src);
    CHECK(first[i].dst == all[i].dst);
    CHECK(first[i].latency == all[i].latency);
  }
}

namespace {

/// The fabric crossing route() chooses, found the slow way: every pair of ends in index order, the tree path
/// between them from their lists of ancestors, strict improvements kept (the first cheapest pair wins).
std::optional<FabricCrossing> scan_crossing(const Topology& t, const FabricEnds& from, const FabricEnds& to) {
  auto ancestors = [&](Vertex v) {
    std::vector<Vertex> up{v};
    while (t.fabric_parent(up.back()) != Graph::null_vertex()) up.push_back(t.fabric_parent(up.back()));
    return up;
  };
  std::optional<FabricCrossing> best;
  for (std::size_t ia = 0; ia < from.size(); ++ia) {
    for (std::size_t ib = 0; ib < to.size(); ++ib) {
      if (from.v[ia] == to.v[ib]) continue;
      const std::vector<Vertex> ua = ancestors(from.v[ia]), ub = ancestors(to.v[ib]);
      if (ua.back() != ub.back()) continue;
      std::size_t ka = ua.size() - 1, kb = ub.size() - 1;  // uplinks to the root
      while (ka > 0 && kb > 0 && ua[ka - 1] == ub[kb - 1]) {
        --ka;
        --kb;
      }
      std::int64_t c = from.cost[ia] + to.cost[ib];
      for (std::size_t i = 0; i < ka; ++i) c += cost_of(t.graph()[t.uplink(ua[i])].kind);
      for (std::size_t i = 0; i < kb; ++i) c += cost_of(t.graph()[t.uplink(ub[i])].kind);
      if (!best || c < best->cost)
        best = FabricCrossing{ia, ib, static_cast<int>(ka), static_cast<int>(kb), c};
    }
  }
  return best;
}

void check_crossings(const Topology& t) {
  std::vector<FabricEnds> ends;
  for (const GpuInfo& g : t.gpus) ends.push_back(t.fabric_ends(g.vertex, t.route_tree(g.vertex)));
  for (const GpuInfo& a : t.gpus) {
    for (const GpuInfo& b : t.gpus) {
      if (a.node == b.node) continue;
      CAPTURE(a.name);
      CAPTURE(b.name);
      const auto fast = t.cheapest_crossing(ends[a.index], ends[b.index]);
      const auto slow = scan_crossing(t, ends[a.index], ends[b.index]);
      REQUIRE(fast.has_value() == slow.has_value());
      if (!fast) continue;
      CHECK(fast->a == slow->a);
      CHECK(fast->b == slow->b);
      CHECK(fast->up == slow->up);
      CHECK(fast->down == slow->down);
      CHECK(fast->cost == slow->cost);
      // The route itself: the tree's route to end a, the crossing, end b's route to dst backwards.
      const Route r = t.route(a.vertex, b.vertex);
      std::size_t fabric_edges = 0;
      for (const Edge& e : r.edges) fabric_edges += t.graph()[e].kind == LinkKind::Network ? 1 : 0;
      CHECK(fabric_edges == static_cast<std::size_t>(fast->up + fast->down));
      const Vertex via_a = ends[a.index].v[fast->a], via_b = ends[b.index].v[fast->b];
      bool saw_a = false, saw_b = false;
      for (const Edge& e : r.edges) {
        saw_a = saw_a || boost::source(e, t.graph()) == via_a;
        saw_b = saw_b || boost::target(e, t.graph()) == via_b;
      }
      CHECK(saw_a);
      CHECK(saw_b);
    }
  }
}

}  // namespace

TEST_CASE(
    "routing: the crossing between machines is the first cheapest pair of ends, as a scan of every pair") {
  SUBCASE("two tiers, 4 rail-optimised nodes") {
    check_crossings(whatif(kTwoTier));
  }
  SUBCASE("three tiers, 8 nodes in 2 pods") {
    check_crossings(whatif(kThreeTier));
  }
  SUBCASE("fewer rails than NICs on a PCIe server, oversubscribed") {
    check_crossings(whatif(kPcieTwoRails));
  }
}

TEST_CASE("routing: links are numbered in the graph's edge order and a reused route tree equals a new one") {
  const Topology t = whatif(kThreeTier);
  const Graph& g = t.graph();
  int expected = 0;
  for (auto [e, end] = boost::edges(g); e != end; ++e) REQUIRE(g[*e].id == expected++);
  CHECK(static_cast<std::size_t>(expected) == boost::num_edges(g));
  // One tree refilled vertex after vertex (GPUs of different machines, then a fabric switch, then a GPU
  // again) against a tree made fresh for each.
  RouteTree reused;
  int compared = 0;
  for (auto [v, vend] = boost::vertices(g); v != vend; ++v) {
    t.route_tree(*v, reused);
    check_same_tree(t, reused, t.route_tree(*v));
    ++compared;
  }
  CHECK(compared > 20);
}

TEST_CASE("routing: a route tree copied from a machine alike inside equals the searched one") {
  // Two HGX H100 machines as the preset has them, two with PCIe Gen4 links, and a DGX A100.
  const Topology t = whatif(R"(
[[nodes]]
count = 2
preset = "hgx-h100"
[[nodes]]
count = 2
preset = "hgx-h100"
[nodes.overrides]
pcie_gen = 4
[[nodes]]
count = 1
preset = "dgx-a100"
[fabric]
kind = "infiniband"
rails = 8
nodes_per_leaf = 2
)");
  REQUIRE(t.nodes.size() == 5);
  CHECK(t.same_machine_shape(0, 0));
  CHECK(t.same_machine_shape(0, 1));
  CHECK(t.same_machine_shape(3, 2));
  CHECK_FALSE(t.same_machine_shape(0, 2));  // the same layout, PCIe links of another bandwidth
  CHECK_FALSE(t.same_machine_shape(1, 3));
  CHECK_FALSE(t.same_machine_shape(0, 4));  // another server
  CHECK_FALSE(t.same_machine_shape(0, 5));  // no such machine
  CHECK_FALSE(t.same_machine_shape(-1, 0));
  int copied = 0;
  for (const GpuInfo& gpu : t.gpus) {
    // The model: the GPU at this one's place in the first machine of its kind.
    const int first = gpu.node < 2 ? 0 : gpu.node < 4 ? 2 : 4;
    const NodeInfo& mine = t.nodes[static_cast<std::size_t>(gpu.node)];
    const auto place = static_cast<std::size_t>(std::find(mine.gpus.begin(), mine.gpus.end(), gpu.index) -
                                                mine.gpus.begin());
    const NodeInfo& model_node = t.nodes[static_cast<std::size_t>(first)];
    const int model_gpu = model_node.gpus[std::min(place, model_node.gpus.size() - 1)];
    const RouteTree model = t.route_tree(t.gpus[static_cast<std::size_t>(model_gpu)].vertex);
    RouteTree like;
    t.route_tree_like(gpu.vertex, model, like);
    check_same_tree(t, like, t.route_tree(gpu.vertex));
    if (gpu.node != first && gpu.node < 4) ++copied;
  }
  CHECK(copied == 16);
  // The tree is copied, not searched again: a model with a cost changed by hand passes the change on.
  RouteTree marked = t.route_tree(t.gpus[3].vertex);
  for (std::int64_t& c : marked.cost) {
    if (c != std::numeric_limits<std::int64_t>::max()) c += 7;
  }
  RouteTree copy;
  t.route_tree_like(t.gpus[11].vertex, marked, copy);  // GPU 3 of machine 1
  CHECK(copy.cost == marked.cost);
  CHECK(copy.cost != t.route_tree(t.gpus[11].vertex).cost);
  // A twin at another local index is no twin: the tree is searched.
  RouteTree wrong;
  t.route_tree_like(t.gpus[9].vertex, t.route_tree(t.gpus[0].vertex), wrong);
  CHECK(wrong.via == t.route_tree(t.gpus[9].vertex).via);
}
