// The machine as a Boost.Graph of full-duplex links: GPUs, NICs, NVSwitches, PCIe switches, CPUs, network
// switches.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "commsim/core/units.hpp"

namespace commsim::topo {

enum class VertexKind { Gpu, Nic, NvSwitch, PcieSwitch, HostBridge, Cpu, NetSwitch };
enum class LinkKind { NvLink, Pcie, HostLink, Smp, Network };

std::string kind_name(VertexKind kind);
std::string kind_name(LinkKind kind);

struct VertexInfo {
  VertexKind kind = VertexKind::Gpu;
  std::string name;  ///< unique, e.g. "GPU3", "n2/nvswitch", "leaf.r0.1"
  int node = -1;     ///< machine index, -1 for fabric switches
  int index = -1;    ///< global GPU or NIC index for Gpu/Nic vertices
};

/// One direction of a link. Each physical link is two directed edges with independent capacity (full duplex).
struct LinkInfo {
  LinkKind kind = LinkKind::Pcie;
  double bandwidth = 0;     ///< bytes/s in this direction
  Picoseconds latency = 0;  ///< one-way latency of this hop
  int width = 0;            ///< NVLinks in the bundle, or PCIe lanes
  int pcie_gen = 0;         ///< for PCIe links
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, VertexInfo, LinkInfo>;
using Vertex = Graph::vertex_descriptor;
using Edge = Graph::edge_descriptor;

struct GpuInfo {
  int index = 0;  ///< global index
  int node = 0;
  int local_index = 0;  ///< index within its machine (GPUk of nvidia-smi)
  std::string name;
  std::string model;  ///< catalogue GPU name, e.g. "H200"
  int numa = -1;
  std::string cpu_affinity;
  int nvlinks = 0;              ///< active NVLinks
  double nvlink_bandwidth = 0;  ///< bytes/s per direction over all NVLinks
  int pcie_gen = 0;
  int pcie_lanes = 0;
  Vertex vertex = 0;
};

struct NicInfo {
  int index = 0;
  int node = 0;
  int local_index = 0;
  std::string name;      ///< column label, e.g. "NIC0" or "mlx5_0"
  std::string device;    ///< device name, e.g. "mlx5_0"
  double bandwidth = 0;  ///< bytes/s per direction on the network side
  int rail = -1;         ///< rail it is cabled to, -1 when not on a fabric
  int numa = -1;
  Vertex vertex = 0;
};

struct NodeInfo {
  std::string name;
  std::string source;  ///< file or preset it was built from
  std::string gpu_model;
  std::string gpu_origin;     ///< how the GPU model was chosen (flag, nvlink -s, default rule)
  std::string nvlink_fabric;  ///< "nvswitch", "direct" or "none"
  std::vector<int> gpus;      ///< global GPU indices
  std::vector<int> nics;      ///< global NIC indices
  /// nvidia-smi code between local GPUs [a][b], e.g. "NV18", "PIX", "SYS".
  std::vector<std::vector<std::string>> codes;
};

struct FabricInfo {
  std::string kind;           ///< infiniband, roce or tcp
  double link_bandwidth = 0;  ///< bytes/s per direction of a switch port
  Picoseconds hop_latency = 0;
  int rails = 1;
  int nodes_per_leaf = 0;
  double oversubscription = 1;  ///< leaf downlink : uplink
  int leaves = 0;
  bool spine = false;
};

/// A route between two vertices and its properties.
struct Route {
  std::vector<Edge> edges;
  double bandwidth = 0;     ///< bottleneck, bytes/s per direction
  Picoseconds latency = 0;  ///< sum of hop latencies
};

/// The routes from one vertex to every other, compactly: the last edge into each reached vertex, once for
/// routes that stay inside the source's machine and once for routes through the fabric (to other machines).
/// A route is rebuilt on demand by walking these edges back to the source.
struct RouteTree {
  Vertex src = 0;
  std::vector<Edge> via;  ///< inside the machine
  std::vector<bool> reached;
  std::vector<Edge> via_fabric;  ///< through the fabric (empty without one)
  std::vector<bool> reached_fabric;
  std::vector<bool> remote;  ///< the vertex is reached through the fabric (another machine, or a switch)
  /// The route to `dst` (empty, zero bandwidth, when unreachable or dst == src).
  Route to(const Graph& g, Vertex dst) const;
  /// Edges on the route to `dst`, 0 when unreachable.
  int hops(const Graph& g, Vertex dst) const;
};

class Topology {
 public:
  Vertex add_vertex(VertexInfo info);
  /// Adds a full-duplex link: one directed edge each way, both with `info`.
  void add_link(Vertex a, Vertex b, const LinkInfo& info);

  const Graph& graph() const { return graph_; }
  const VertexInfo& vertex(Vertex v) const { return graph_[v]; }

  std::vector<GpuInfo> gpus;
  std::vector<NicInfo> nics;
  std::vector<NodeInfo> nodes;
  std::optional<FabricInfo> fabric;
  std::string name;
  std::string source;
  /// Things inferred or assumed while building, for people (also printed by `topo show`).
  std::vector<std::string> notes;

  /// The nvidia-smi code of a GPU pair: the node's matrix code, or "NET" across machines.
  std::string pair_code(int src_gpu, int dst_gpu) const;

  /// Routes from `src` to every vertex: NVLink is preferred over PCIe, PCIe over the CPU interconnect and the
  /// network, and no route passes through a GPU. Deterministic. Unreachable vertices get an empty Route with
  /// zero bandwidth.
  std::vector<Route> routes_from(Vertex src) const;
  Route route(Vertex src, Vertex dst) const;
  /// The same routes as routes_from, as a tree: O(vertices) memory instead of one edge list per destination.
  RouteTree route_tree(Vertex src) const;

 private:
  /// Dijkstra from `src`: the last edge into every vertex reached (through the fabric or not).
  void tree_within(Vertex src, bool use_fabric, std::vector<Edge>& via, std::vector<bool>& reached) const;
  Graph graph_;
};

}  // namespace commsim::topo
