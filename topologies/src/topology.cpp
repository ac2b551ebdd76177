// Topology graph construction and routing (deterministic Dijkstra with link-kind preferences).
#include "commsim/topo/topology.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <queue>

#include "commsim/core/enum_names.hpp"
#include "commsim/core/error.hpp"

namespace commsim::topo {

std::string kind_name(VertexKind kind) {
  switch (kind) {
    case VertexKind::Gpu:
      return "gpu";
    case VertexKind::Nic:
      return "nic";
    case VertexKind::NvSwitch:
      return "nvswitch";
    case VertexKind::PcieSwitch:
      return "pcie_switch";
    case VertexKind::HostBridge:
      return "host_bridge";
    case VertexKind::Cpu:
      return "cpu";
    case VertexKind::NetSwitch:
      return "net_switch";
  }
  return "?";
}

namespace {

constexpr EnumNames<LinkKind, 5> kLinkKinds{{{LinkKind::NvLink, "nvlink"},
                                             {LinkKind::Pcie, "pcie"},
                                             {LinkKind::HostLink, "host"},
                                             {LinkKind::Smp, "smp"},
                                             {LinkKind::Network, "network"}}};
/// In hardware.toml's order, so that the list in errors matches the catalogue's.
constexpr EnumNames<FabricKind, 3> kFabricKinds{
    {{FabricKind::InfiniBand, "infiniband"}, {FabricKind::Roce, "roce"}, {FabricKind::Tcp, "tcp"}}};

}  // namespace

std::string kind_name(LinkKind kind) {
  return kLinkKinds.name(kind);
}

const char* kind_name(FabricKind kind) {
  return kFabricKinds.name(kind);
}

FabricKind parse_fabric_kind(std::string_view text) {
  return kFabricKinds.parse(text, "fabric kind", "kinds");
}

namespace {

/// Routing cost of one hop: NVLink first, then PCIe; between machines a GPU uses its nearest NIC and the
/// fabric rather than a PCIe detour through the CPUs to another NIC.
std::int64_t hop_cost(LinkKind kind) {
  switch (kind) {
    case LinkKind::NvLink:
      return 1;
    case LinkKind::Pcie:
      return 100;
    case LinkKind::HostLink:
      return 100;
    case LinkKind::Network:
      return 50;
    case LinkKind::Smp:
      return 1000;
  }
  return 1;
}

}  // namespace

Vertex Topology::add_vertex(VertexInfo info) {
  const int node = info.node;
  const Vertex v = boost::add_vertex(std::move(info), graph_);
  if (node >= 0 && graph_[v].kind != VertexKind::NetSwitch) {
    if (node_vertices_.size() <= static_cast<std::size_t>(node)) node_vertices_.resize(node + 1);
    local_index_.push_back(static_cast<int>(node_vertices_[node].size()));
    node_vertices_[node].push_back(v);
  } else {
    local_index_.push_back(-1);
  }
  parent_.push_back(Graph::null_vertex());
  local_hops_.emplace_back();
  up_slot_.push_back(0);
  down_slot_.push_back(0);
  up_cost_.push_back(0);
  return v;
}

Edge Topology::up_edge(Vertex v) const {
  return *std::next(boost::out_edges(v, graph_).first, static_cast<std::ptrdiff_t>(up_slot_[v]));
}

Edge Topology::down_edge(Vertex v) const {
  return *std::next(boost::out_edges(parent_[v], graph_).first, static_cast<std::ptrdiff_t>(down_slot_[v]));
}

void Topology::add_link(Vertex a, Vertex b, const LinkInfo& info) {
  if (boost::num_edges(graph_) >= static_cast<std::size_t>(std::numeric_limits<int>::max() - 1))
    throw Error("a topology of over 2^31 links");
  LinkInfo l = info;
  l.id = static_cast<int>(boost::num_edges(graph_));
  boost::add_edge(a, b, l, graph_);
  ++l.id;
  boost::add_edge(b, a, l, graph_);
  if (local_index_[a] >= 0 && local_index_[b] >= 0 && graph_[a].node == graph_[b].node) {
    const std::int64_t cost = hop_cost(info.kind);
    local_hops_[a].push_back({static_cast<std::uint32_t>(local_index_[b]),
                              static_cast<std::uint32_t>(boost::out_degree(a, graph_) - 1), cost});
    local_hops_[b].push_back({static_cast<std::uint32_t>(local_index_[a]),
                              static_cast<std::uint32_t>(boost::out_degree(b, graph_) - 1), cost});
  }
  if (info.kind == LinkKind::Network && graph_[b].kind == VertexKind::NetSwitch &&
      (graph_[a].kind == VertexKind::Nic || graph_[a].kind == VertexKind::NetSwitch)) {
    if (parent_[a] != Graph::null_vertex())
      throw Error(graph_[a].name + " has two uplinks; the network fabric must be a tree");
    parent_[a] = b;
    up_slot_[a] = boost::out_degree(a, graph_) - 1;    // a -> b, just appended
    down_slot_[a] = boost::out_degree(b, graph_) - 1;  // b -> a, just appended
    up_cost_[a] = hop_cost(info.kind);
  }
}

namespace {

/// The GpuPair of two GPUs of one machine; nullptr across machines.
const GpuPair* same_node_pair(const Topology& topo, int src_gpu, int dst_gpu) {
  const GpuInfo& a = topo.gpus.at(src_gpu);
  const GpuInfo& b = topo.gpus.at(dst_gpu);
  if (a.node != b.node) return nullptr;
  return &topo.nodes.at(a.node).pairs.at(a.local_index).at(b.local_index);
}

}  // namespace

std::string Topology::pair_code(int src_gpu, int dst_gpu) const {
  const GpuPair* p = same_node_pair(*this, src_gpu, dst_gpu);
  return p ? code_name(p->code, p->nvlinks) : "NET";
}

models::PathType Topology::path_type(int src_gpu, int dst_gpu) const {
  const GpuPair* p = same_node_pair(*this, src_gpu, dst_gpu);
  return p ? p->path : models::PathType::Net;
}

std::string Topology::gpu_model() const {
  std::string model = gpus.empty() ? "" : gpus.front().model;
  for (const GpuInfo& g : gpus) {
    if (g.model != model) return "";
  }
  return model;
}

int Topology::pair_nvlinks(int src_gpu, int dst_gpu) const {
  const GpuPair* p = same_node_pair(*this, src_gpu, dst_gpu);
  return p ? p->nvlinks : 0;
}

bool Topology::same_machine_shape(int a, int b) const {
  const auto n = static_cast<int>(nodes.size());
  const auto m = static_cast<int>(node_vertices_.size());
  if (a < 0 || b < 0 || a >= n || b >= n || a >= m || b >= m) return false;
  if (a == b) return true;
  const NodeInfo& na = nodes[static_cast<std::size_t>(a)];
  const NodeInfo& nb = nodes[static_cast<std::size_t>(b)];
  if (na.nvlink_fabric != nb.nvlink_fabric || na.gpus.size() != nb.gpus.size() ||
      na.pairs.size() != nb.pairs.size()) {
    return false;
  }
  for (std::size_t i = 0; i < na.pairs.size(); ++i) {
    if (na.pairs[i].size() != nb.pairs[i].size()) return false;
    for (std::size_t j = 0; j < na.pairs[i].size(); ++j) {
      const GpuPair& p = na.pairs[i][j];
      const GpuPair& q = nb.pairs[i][j];
      if (p.code != q.code || p.nvlinks != q.nvlinks || p.path != q.path) return false;
    }
  }
  for (std::size_t i = 0; i < na.gpus.size(); ++i) {
    const GpuInfo& g = gpus.at(static_cast<std::size_t>(na.gpus[i]));
    const GpuInfo& h = gpus.at(static_cast<std::size_t>(nb.gpus[i]));
    if (g.local_index != h.local_index || local_index_[g.vertex] != local_index_[h.vertex] ||
        g.nvlinks != h.nvlinks || g.nvlink_bandwidth != h.nvlink_bandwidth || g.model != h.model) {
      return false;
    }
  }
  const std::vector<Vertex>& va = node_vertices_[static_cast<std::size_t>(a)];
  const std::vector<Vertex>& vb = node_vertices_[static_cast<std::size_t>(b)];
  if (va.size() != vb.size()) return false;
  for (std::size_t l = 0; l < va.size(); ++l) {
    const Vertex u = va[l], w = vb[l];
    if (graph_[u].kind != graph_[w].kind) return false;
    const std::vector<LocalHop>& hu = local_hops_[u];
    const std::vector<LocalHop>& hw = local_hops_[w];
    if (hu.size() != hw.size()) return false;
    for (std::size_t k = 0; k < hu.size(); ++k) {
      if (hu[k].to != hw[k].to || hu[k].slot != hw[k].slot || hu[k].cost != hw[k].cost) return false;
      const LinkInfo& x = graph_[out_edge_at(u, hu[k].slot)];
      const LinkInfo& y = graph_[out_edge_at(w, hw[k].slot)];
      if (x.kind != y.kind || x.bandwidth != y.bandwidth || x.latency != y.latency || x.width != y.width ||
          x.pcie_gen != y.pcie_gen) {
        return false;
      }
    }
  }
  return true;
}

RouteTree Topology::route_tree(Vertex src) const {
  RouteTree t;
  route_tree(src, t);
  return t;
}

void Topology::route_tree(Vertex src, RouteTree& t) const {
  t.src = src;
  t.local = &local_index_;
  t.vertices.clear();
  t.cost.clear();
  t.via.clear();
  t.via_slot.clear();
  const int node = graph_[src].node;
  if (local_index_[src] < 0) return;  // a fabric switch: no machine
  const std::vector<Vertex>& mine = node_vertices_[node];
  t.vertices.assign(mine.begin(), mine.end());
  const std::size_t n = t.vertices.size();
  constexpr std::int64_t kInf = std::numeric_limits<std::int64_t>::max();
  t.cost.assign(n, kInf);
  t.via.assign(n, Edge{});
  using Item = std::pair<std::int64_t, std::size_t>;  // (cost, local index)
  thread_local std::vector<Item> heap;  // a min-heap by (cost, index), as std::priority_queue ordered it
  // Per local index: the vertex (local) whose out-edge reached it last, and that edge's position.
  std::vector<std::pair<std::uint32_t, std::uint32_t>>& via_slot = t.via_slot;
  heap.clear();
  via_slot.assign(n, {0, 0});
  const auto s = static_cast<std::size_t>(local_index_[src]);
  t.cost[s] = 0;
  heap.push_back({0, s});
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    auto [c, lu] = heap.back();
    heap.pop_back();
    if (c != t.cost[lu]) continue;
    const Vertex u = t.vertices[lu];
    if (u != src && graph_[u].kind == VertexKind::Gpu) continue;  // GPUs are endpoints, never transit
    // The out-edges that stay inside the machine, in out-edge order (local_hops_).
    for (const LocalHop& h : local_hops_[u]) {
      const std::int64_t nc = c + h.cost;
      if (nc < t.cost[h.to]) {
        t.cost[h.to] = nc;
        via_slot[h.to] = {static_cast<std::uint32_t>(lu), h.slot};
        heap.push_back({nc, h.to});
        std::push_heap(heap.begin(), heap.end(), std::greater<>());
      }
    }
  }
  fill_via(t, s);
}

Edge Topology::out_edge_at(Vertex v, std::uint32_t slot) const {
  return *std::next(boost::out_edges(v, graph_).first, static_cast<std::ptrdiff_t>(slot));
}

void Topology::fill_via(RouteTree& t, std::size_t s) const {
  for (std::size_t l = 0; l < t.vertices.size(); ++l) {
    if (l == s || t.cost[l] == std::numeric_limits<std::int64_t>::max()) continue;
    const auto [from, slot] = t.via_slot[l];
    t.via[l] = out_edge_at(t.vertices[from], slot);
  }
}

void Topology::route_tree_like(Vertex src, const RouteTree& twin, RouteTree& t) const {
  const int node = graph_[src].node;
  const int l_src = local_index_[src];
  const bool alike = &twin != &t && l_src >= 0 && node >= 0 &&
                     static_cast<std::size_t>(node) < node_vertices_.size() &&
                     twin.src < local_index_.size() && local_index_[twin.src] == l_src &&
                     twin.vertices.size() == node_vertices_[static_cast<std::size_t>(node)].size() &&
                     twin.cost.size() == twin.vertices.size() && twin.via_slot.size() == twin.vertices.size();
  if (!alike) {
    route_tree(src, t);
    return;
  }
  const std::vector<Vertex>& mine = node_vertices_[static_cast<std::size_t>(node)];
  t.src = src;
  t.local = &local_index_;
  t.vertices.assign(mine.begin(), mine.end());
  t.cost.assign(twin.cost.begin(), twin.cost.end());
  t.via_slot.assign(twin.via_slot.begin(), twin.via_slot.end());
  t.via.assign(mine.size(), Edge{});
  fill_via(t, static_cast<std::size_t>(l_src));
}

bool RouteTree::reaches(Vertex dst) const {
  if (!local || dst >= local->size()) return false;
  const int l = (*local)[dst];
  return l >= 0 && static_cast<std::size_t>(l) < vertices.size() && vertices[l] == dst &&
         cost[l] != std::numeric_limits<std::int64_t>::max();
}

Route RouteTree::to(const Graph& g, Vertex dst) const {
  Route r;
  if (dst == src || !reaches(dst)) return r;
  r.bandwidth = std::numeric_limits<double>::infinity();
  for (Vertex w = dst; w != src; w = boost::source(via[(*local)[w]], g)) {
    const Edge e = via[(*local)[w]];
    const LinkInfo& l = g[e];
    r.edges.push_back(e);
    r.bandwidth = std::min(r.bandwidth, l.bandwidth);
    r.latency += l.latency;
  }
  std::reverse(r.edges.begin(), r.edges.end());
  return r;
}

int RouteTree::hops(const Graph& g, Vertex dst) const {
  if (dst == src || !reaches(dst)) return 0;
  int h = 0;
  for (Vertex w = dst; w != src; w = boost::source(via[(*local)[w]], g)) ++h;
  return h;
}

FabricEnds Topology::fabric_ends(Vertex x, const RouteTree& t) const {
  FabricEnds out;
  const auto none = Graph::null_vertex();
  auto add = [&](Vertex v, std::int64_t cost) {
    out.v.push_back(v);
    out.cost.push_back(cost);
    int depth = 0;
    Vertex top = v;
    for (; parent_[top] != none; top = parent_[top]) ++depth;
    out.root.push_back(top);
    out.depth.push_back(depth);
    if (parent_[v] != none && (out.min_up == 0 || up_cost_[v] < out.min_up)) out.min_up = up_cost_[v];
  };
  // Sized once: a GPU of an HGX node has 16 ends, and growing five arrays one end at a time cost a run's
  // set-up more than finding them.
  std::size_t n = local_index_[x] < 0 || parent_[x] != none ? 1 : 0;
  for (std::size_t i = 0; i < t.vertices.size(); ++i) {
    const Vertex v = t.vertices[i];
    n += v != x && parent_[v] != none && t.cost[i] != std::numeric_limits<std::int64_t>::max() ? 1 : 0;
  }
  out.v.reserve(n);
  out.cost.reserve(n);
  out.root.reserve(n);
  out.depth.reserve(n);
  if (local_index_[x] < 0 || parent_[x] != none) add(x, 0);
  for (std::size_t i = 0; i < t.vertices.size(); ++i) {
    const Vertex v = t.vertices[i];
    if (v != x && parent_[v] != none && t.cost[i] != std::numeric_limits<std::int64_t>::max())
      add(v, t.cost[i]);
  }
  out.by_cost.resize(out.v.size());
  for (std::uint32_t i = 0; i < out.by_cost.size(); ++i) out.by_cost[i] = i;
  std::stable_sort(out.by_cost.begin(), out.by_cost.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return out.cost[a] < out.cost[b]; });
  return out;
}

std::optional<FabricCrossing> Topology::cheapest_crossing(const FabricEnds& from,
                                                          const FabricEnds& to) const {
  // The cheapest pair of ends, ties to the lowest (a, b) in index order: what a scan of every pair in index
  // order keeping strict improvements finds. The pairs are visited cheapest ends first, and a pair is skipped
  // once its ends alone, plus the cheapest first hop that any crossing between distinct vertices of one tree
  // takes, cost more than the best found.
  if (from.size() == 0 || to.size() == 0) return std::nullopt;
  std::int64_t lb = 0;  // every crossing climbs at least one uplink, of one of the two ends
  if (from.min_up > 0 && to.min_up > 0) {
    lb = std::min(from.min_up, to.min_up);
  } else {
    lb = std::max(from.min_up, to.min_up);
  }
  const std::int64_t to_min = to.cost[to.by_cost.front()];
  std::optional<FabricCrossing> best;
  for (const std::uint32_t ia : from.by_cost) {
    const std::int64_t ca = from.cost[ia];
    if (best && ca + to_min + lb > best->cost) break;
    for (const std::uint32_t ib : to.by_cost) {
      const std::int64_t cab = ca + to.cost[ib];
      if (best && cab + lb > best->cost) break;
      if (from.v[ia] == to.v[ib] || from.root[ia] != to.root[ib]) continue;
      // Climb to the lowest common ancestor: the deeper side first, then both.
      Vertex x = from.v[ia], y = to.v[ib];
      int dx = from.depth[ia], dy = to.depth[ib], up = 0, down = 0;
      std::int64_t c = cab;
      while (dx > dy) {
        c += up_cost_[x];
        x = parent_[x];
        --dx;
        ++up;
      }
      while (dy > dx) {
        c += up_cost_[y];
        y = parent_[y];
        --dy;
        ++down;
      }
      while (x != y) {
        c += up_cost_[x] + up_cost_[y];
        x = parent_[x];
        y = parent_[y];
        ++up;
        ++down;
      }
      if (!best || c < best->cost || (c == best->cost && (ia < best->a || (ia == best->a && ib < best->b))))
        best = FabricCrossing{ia, ib, up, down, c};
    }
  }
  return best;
}

Route Topology::route(Vertex src, Vertex dst) const {
  Route r;
  if (src == dst) return r;
  const int ns = graph_[src].node, nd = graph_[dst].node;
  if (local_index_[src] >= 0 && local_index_[dst] >= 0 && ns == nd) return route_tree(src).to(graph_, dst);

  // Through the fabric: the cheapest combination of a route to an end of the source's machine (or the source
  // itself on the fabric tree), the unique path through the tree, and a route from an end of dst's machine.
  const RouteTree from_src = route_tree(src), from_dst = route_tree(dst);
  const FabricEnds a_ends = fabric_ends(src, from_src), b_ends = fabric_ends(dst, from_dst);
  const std::optional<FabricCrossing> x = cheapest_crossing(a_ends, b_ends);
  if (!x) return r;
  const Vertex best_a = a_ends.v[x->a], best_b = b_ends.v[x->b];
  std::vector<Edge> edges = from_src.to(graph_, best_a).edges;
  Vertex v = best_a;
  for (int i = 0; i < x->up; ++i, v = parent_[v]) edges.push_back(up_edge(v));
  // Down towards b: b's ancestors' downlinks, from the top.
  const std::size_t at = edges.size();
  v = best_b;
  for (int i = 0; i < x->down; ++i, v = parent_[v]) edges.push_back(down_edge(v));
  std::reverse(edges.begin() + static_cast<std::ptrdiff_t>(at), edges.end());
  // From b's NIC to dst: the destination's tree walked backwards, each edge taken in the other direction.
  const Route back = from_dst.to(graph_, best_b);
  for (std::size_t i = back.edges.size(); i-- > 0;) {
    const Edge e = back.edges[i];
    edges.push_back(boost::edge(boost::target(e, graph_), boost::source(e, graph_), graph_).first);
  }
  r.bandwidth = std::numeric_limits<double>::infinity();
  for (const Edge& e : edges) {
    r.bandwidth = std::min(r.bandwidth, graph_[e].bandwidth);
    r.latency += graph_[e].latency;
  }
  r.edges = std::move(edges);
  return r;
}

}  // namespace commsim::topo
