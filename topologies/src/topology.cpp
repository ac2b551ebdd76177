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
  up_slot_.push_back(0);
  down_slot_.push_back(0);
  return v;
}

Edge Topology::up_edge(Vertex v) const {
  return *std::next(boost::out_edges(v, graph_).first, static_cast<std::ptrdiff_t>(up_slot_[v]));
}

Edge Topology::down_edge(Vertex v) const {
  return *std::next(boost::out_edges(parent_[v], graph_).first, static_cast<std::ptrdiff_t>(down_slot_[v]));
}

void Topology::add_link(Vertex a, Vertex b, const LinkInfo& info) {
  boost::add_edge(a, b, info, graph_);
  boost::add_edge(b, a, info, graph_);
  if (info.kind == LinkKind::Network && graph_[b].kind == VertexKind::NetSwitch &&
      (graph_[a].kind == VertexKind::Nic || graph_[a].kind == VertexKind::NetSwitch)) {
    if (parent_[a] != Graph::null_vertex())
      throw Error(graph_[a].name + " has two uplinks; the network fabric must be a tree");
    parent_[a] = b;
    up_slot_[a] = boost::out_degree(a, graph_) - 1;    // a -> b, just appended
    down_slot_[a] = boost::out_degree(b, graph_) - 1;  // b -> a, just appended
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

int Topology::pair_nvlinks(int src_gpu, int dst_gpu) const {
  const GpuPair* p = same_node_pair(*this, src_gpu, dst_gpu);
  return p ? p->nvlinks : 0;
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

RouteTree Topology::route_tree(Vertex src) const {
  RouteTree t;
  t.src = src;
  t.local = &local_index_;
  const int node = graph_[src].node;
  if (local_index_[src] < 0) return t;  // a fabric switch: no machine
  t.vertices = node_vertices_[node];
  const std::size_t n = t.vertices.size();
  constexpr std::int64_t kInf = std::numeric_limits<std::int64_t>::max();
  t.cost.assign(n, kInf);
  t.via.assign(n, Edge{});
  using Item = std::pair<std::int64_t, std::size_t>;  // (cost, local index)
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
  const auto s = static_cast<std::size_t>(local_index_[src]);
  t.cost[s] = 0;
  queue.push({0, s});
  while (!queue.empty()) {
    auto [c, lu] = queue.top();
    queue.pop();
    if (c != t.cost[lu]) continue;
    const Vertex u = t.vertices[lu];
    if (u != src && graph_[u].kind == VertexKind::Gpu) continue;  // GPUs are endpoints, never transit
    for (auto [e, end] = boost::out_edges(u, graph_); e != end; ++e) {
      const Vertex v = boost::target(*e, graph_);
      if (local_index_[v] < 0 || graph_[v].node != node) continue;  // stay inside the machine
      const auto lv = static_cast<std::size_t>(local_index_[v]);
      const std::int64_t nc = c + hop_cost(graph_[*e].kind);
      if (nc < t.cost[lv]) {
        t.cost[lv] = nc;
        t.via[lv] = *e;
        queue.push({nc, lv});
      }
    }
  }
  return t;
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

Route Topology::route(Vertex src, Vertex dst) const {
  Route r;
  if (src == dst) return r;
  const int ns = graph_[src].node, nd = graph_[dst].node;
  if (local_index_[src] >= 0 && local_index_[dst] >= 0 && ns == nd) return route_tree(src).to(graph_, dst);

  // Through the fabric. Entry points: the source itself when it is on the fabric tree (a switch or NIC with
  // an uplink), and every vertex of its machine with an uplink (its NICs), reached inside the machine.
  struct End {
    Vertex v;
    std::int64_t cost;
  };
  const RouteTree from_src = route_tree(src), from_dst = route_tree(dst);
  auto ends = [&](Vertex x, const RouteTree& t) {
    std::vector<End> out;
    const auto none = Graph::null_vertex();
    if (local_index_[x] < 0 || parent_[x] != none) out.push_back({x, 0});
    for (std::size_t i = 0; i < t.vertices.size(); ++i) {
      const Vertex v = t.vertices[i];
      if (v != x && parent_[v] != none && t.cost[i] != std::numeric_limits<std::int64_t>::max())
        out.push_back({v, t.cost[i]});
    }
    return out;
  };
  // The unique path between two vertices of the fabric tree: up from each to their lowest common ancestor.
  auto up_path = [&](Vertex x) {
    std::vector<Edge> path;
    for (Vertex v = x; parent_[v] != Graph::null_vertex(); v = parent_[v]) path.push_back(up_edge(v));
    return path;
  };
  auto top = [&](const std::vector<Edge>& path, Vertex x) {
    return path.empty() ? x : boost::target(path.back(), graph_);
  };
  const std::vector<End> a_ends = ends(src, from_src), b_ends = ends(dst, from_dst);
  std::vector<std::vector<Edge>> b_up;
  for (const End& b : b_ends) b_up.push_back(up_path(b.v));
  std::int64_t best = std::numeric_limits<std::int64_t>::max();
  std::vector<Edge> best_fabric;
  Vertex best_a = src, best_b = dst;
  for (const End& a : a_ends) {
    const std::vector<Edge> ua = up_path(a.v);
    for (std::size_t bi = 0; bi < b_ends.size(); ++bi) {
      const End& b = b_ends[bi];
      if (a.v == b.v) continue;
      const std::vector<Edge>& ub = b_up[bi];
      if (top(ua, a.v) != top(ub, b.v)) continue;  // different fabrics
      // Drop the common ancestors: climb from both until the paths meet.
      std::size_t ka = ua.size(), kb = ub.size();
      while (ka > 0 && kb > 0 && boost::target(ua[ka - 1], graph_) == boost::target(ub[kb - 1], graph_) &&
             boost::source(ua[ka - 1], graph_) == boost::source(ub[kb - 1], graph_)) {
        --ka;
        --kb;
      }
      std::int64_t c = a.cost + b.cost;
      for (std::size_t i = 0; i < ka; ++i) c += hop_cost(graph_[ua[i]].kind);
      for (std::size_t i = 0; i < kb; ++i) c += hop_cost(graph_[ub[i]].kind);
      if (c >= best) continue;
      best = c;
      best_a = a.v;
      best_b = b.v;
      best_fabric.assign(ua.begin(), ua.begin() + static_cast<std::ptrdiff_t>(ka));
      for (std::size_t i = kb; i-- > 0;) {  // down towards b: the reverse direction of b's uplinks
        best_fabric.push_back(down_edge(boost::source(ub[i], graph_)));
      }
    }
  }
  if (best == std::numeric_limits<std::int64_t>::max()) return r;
  std::vector<Edge> edges = from_src.to(graph_, best_a).edges;
  edges.insert(edges.end(), best_fabric.begin(), best_fabric.end());
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
