// Topology graph construction and routing (deterministic Dijkstra with link-kind preferences).
#include "commsim/topo/topology.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <queue>

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

std::string kind_name(LinkKind kind) {
  switch (kind) {
    case LinkKind::NvLink:
      return "nvlink";
    case LinkKind::Pcie:
      return "pcie";
    case LinkKind::HostLink:
      return "host";
    case LinkKind::Smp:
      return "smp";
    case LinkKind::Network:
      return "network";
  }
  return "?";
}

Vertex Topology::add_vertex(VertexInfo info) {
  return boost::add_vertex(std::move(info), graph_);
}

void Topology::add_link(Vertex a, Vertex b, const LinkInfo& info) {
  boost::add_edge(a, b, info, graph_);
  boost::add_edge(b, a, info, graph_);
}

std::string Topology::pair_code(int src_gpu, int dst_gpu) const {
  const GpuInfo& a = gpus.at(src_gpu);
  const GpuInfo& b = gpus.at(dst_gpu);
  if (a.node != b.node) return "NET";
  return nodes.at(a.node).codes.at(a.local_index).at(b.local_index);
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
  // Routes inside a machine never leave it; routes to other machines may use the fabric.
  RouteTree t;
  t.src = src;
  tree_within(src, false, t.via, t.reached);
  t.remote.assign(t.via.size(), false);
  if (!fabric) return t;
  tree_within(src, true, t.via_fabric, t.reached_fabric);
  const int node = graph_[src].node;
  for (std::size_t v = 0; v < t.via.size(); ++v) t.remote[v] = graph_[v].node != node || node < 0;
  return t;
}

Route RouteTree::to(const Graph& g, Vertex dst) const {
  Route r;
  const bool far = remote[dst];
  const std::vector<Edge>& edges = far ? via_fabric : via;
  if (dst == src || !(far ? reached_fabric[dst] : reached[dst])) return r;
  r.bandwidth = std::numeric_limits<double>::infinity();
  for (std::size_t w = dst; w != src; w = boost::source(edges[w], g)) {
    const LinkInfo& l = g[edges[w]];
    r.edges.push_back(edges[w]);
    r.bandwidth = std::min(r.bandwidth, l.bandwidth);
    r.latency += l.latency;
  }
  std::reverse(r.edges.begin(), r.edges.end());
  return r;
}

int RouteTree::hops(const Graph& g, Vertex dst) const {
  const bool far = remote[dst];
  const std::vector<Edge>& edges = far ? via_fabric : via;
  if (dst == src || !(far ? reached_fabric[dst] : reached[dst])) return 0;
  int h = 0;
  for (std::size_t w = dst; w != src; w = boost::source(edges[w], g)) ++h;
  return h;
}

std::vector<Route> Topology::routes_from(Vertex src) const {
  const RouteTree t = route_tree(src);
  std::vector<Route> routes(t.via.size());
  for (std::size_t v = 0; v < routes.size(); ++v) routes[v] = t.to(graph_, static_cast<Vertex>(v));
  return routes;
}

void Topology::tree_within(Vertex src, bool use_fabric, std::vector<Edge>& via,
                           std::vector<bool>& reached) const {
  const std::size_t n = boost::num_vertices(graph_);
  constexpr std::int64_t kInf = std::numeric_limits<std::int64_t>::max();
  std::vector<std::int64_t> cost(n, kInf);
  via.assign(n, Edge{});
  reached.assign(n, false);
  using Item = std::pair<std::int64_t, std::size_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
  cost[src] = 0;
  queue.push({0, src});
  while (!queue.empty()) {
    auto [c, u] = queue.top();
    queue.pop();
    if (c != cost[u]) continue;
    if (u != src && graph_[u].kind == VertexKind::Gpu) continue;  // GPUs are endpoints, never transit
    if (!use_fabric && u != src && graph_[u].kind == VertexKind::NetSwitch) continue;
    for (auto [e, end] = boost::out_edges(u, graph_); e != end; ++e) {
      const std::size_t v = boost::target(*e, graph_);
      const std::int64_t nc = c + hop_cost(graph_[*e].kind);
      if (nc < cost[v]) {
        cost[v] = nc;
        via[v] = *e;
        reached[v] = true;
        queue.push({nc, v});
      }
    }
  }
}

Route Topology::route(Vertex src, Vertex dst) const {
  return routes_from(src).at(dst);
}

}  // namespace commsim::topo
