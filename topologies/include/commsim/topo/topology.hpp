// The machine as a Boost.Graph of full-duplex links: GPUs, NICs, NVSwitches, PCIe switches, CPUs, network
// switches.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "commsim/core/units.hpp"
#include "commsim/models/link_kind.hpp"
#include "commsim/models/nccl_env.hpp"
#include "commsim/topo/topo_matrix.hpp"

namespace commsim::topo {

enum class VertexKind { Gpu, Nic, NvSwitch, PcieSwitch, HostBridge, Cpu, NetSwitch };
/// The models' link kinds are the graph's edge kinds.
using models::LinkKind;
/// What a fabric's network runs: InfiniBand or RoCE verbs, or TCP sockets.
enum class FabricKind { InfiniBand, Roce, Tcp };

std::string kind_name(VertexKind kind);
/// "nvlink", "pcie", "host", "smp" or "network".
std::string kind_name(LinkKind kind);
/// "infiniband", "roce" or "tcp", as the what-if TOML and hardware.toml spell them.
const char* kind_name(FabricKind kind);
/// The fabric kind `text` names; throws UsageError listing the valid kinds otherwise.
FabricKind parse_fabric_kind(std::string_view text);

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
  /// The link's place in the graph's edge order (0, 1, ... as added; set by Topology::add_link): a dense key
  /// for per-link arrays.
  int id = -1;
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

/// How two GPUs of one machine are connected, fixed when the machine is built.
struct GpuPair {
  PairCode code = PairCode::Unknown;  ///< nvidia-smi's matrix code (NvLink for every pair behind an NVSwitch)
  int nvlinks = 0;  ///< NVLinks between the two (per GPU behind an NVSwitch); 0 when `code` is not NvLink
  models::PathType path = models::PathType::Sys;  ///< NCCL's path type for `code` (nccl_path_type)
};

struct NodeInfo {
  std::string name;
  std::string source;  ///< file or preset it was built from
  std::string gpu_model;
  std::string gpu_origin;     ///< how the GPU model was chosen (flag, nvlink -s, default rule)
  std::string nvlink_fabric;  ///< "nvswitch", "direct" or "none"
  std::vector<int> gpus;      ///< global GPU indices
  std::vector<int> nics;      ///< global NIC indices
  /// How local GPUs a and b are connected: pairs[a][b].
  std::vector<std::vector<GpuPair>> pairs;
};

struct FabricInfo {
  FabricKind kind = FabricKind::InfiniBand;  ///< what the network runs
  double link_bandwidth = 0;                 ///< bytes/s per direction of a switch port
  Picoseconds hop_latency = 0;
  int rails = 1;
  int nodes_per_leaf = 0;
  double oversubscription = 1;  ///< leaf downlink : uplink
  int leaves = 0;
  bool spine = false;
  int nodes_per_pod = 0;             ///< three tiers when > 0: leaves -> pod spine -> core
  double core_oversubscription = 1;  ///< pod spine downlink : uplink to the core
  int pods = 0;
  bool core = false;
};

/// A route between two vertices and its properties.
struct Route {
  std::vector<Edge> edges;
  double bandwidth = 0;     ///< bottleneck, bytes/s per direction
  Picoseconds latency = 0;  ///< sum of hop latencies
};

/// The routes from one vertex to every vertex of its own machine (fabric switches excluded), over that
/// machine's vertices only: the last edge into each and the routing cost, indexed by the vertex's position in
/// the machine. A route is rebuilt on demand by walking these edges back to the source.
struct RouteTree {
  Vertex src = 0;
  std::vector<Vertex> vertices;    ///< the machine's vertices, by local index
  std::vector<Edge> via;           ///< last edge into each vertex, by local index
  std::vector<std::int64_t> cost;  ///< routing cost, by local index (max: unreachable)
  /// By local index: the local index of the last edge's source and the edge's position among that vertex's
  /// out-edges (what `via` names, in terms a machine alike inside shares: Topology::route_tree_like).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> via_slot;
  const std::vector<int>* local = nullptr;  ///< global vertex -> local index (the Topology's table)
  /// The route to `dst` inside the machine (empty, zero bandwidth, when unreachable, remote or dst == src).
  Route to(const Graph& g, Vertex dst) const;
  /// Edges on the route to `dst`, 0 when unreachable.
  int hops(const Graph& g, Vertex dst) const;
  bool reaches(Vertex dst) const;
};

/// The vertices through which routes from (or to) one vertex leave (enter) its machine for the fabric tree:
/// the vertex itself when it is on the tree (a switch, or a NIC with an uplink), then every vertex of its
/// machine with an uplink that it reaches, in vertex order, with the routing cost of reaching it. Computed
/// once per vertex (Topology::fabric_ends) and shared by every route from or to it.
struct FabricEnds {
  std::vector<Vertex> v;
  std::vector<std::int64_t> cost;
  std::vector<Vertex> root;            ///< the top of the fabric tree above each end
  std::vector<int> depth;              ///< uplinks from each end to its root
  std::vector<std::uint32_t> by_cost;  ///< indices, cheapest first (stable)
  std::int64_t min_up = 0;             ///< the cheapest uplink cost of any end (0 when none has one)
  std::size_t size() const { return v.size(); }
};

/// How a route between machines crosses the fabric tree: from end `a` of the source's FabricEnds up `up`
/// uplinks to the lowest common ancestor, then down `down` downlinks to end `b` of the destination's.
struct FabricCrossing {
  std::size_t a = 0, b = 0;
  int up = 0, down = 0;
  std::int64_t cost = 0;  ///< in-machine costs of both ends plus the fabric hops
};

class Topology {
 public:
  Vertex add_vertex(VertexInfo info);
  /// Adds a full-duplex link: one directed edge each way, both with `info`. A network link from a NIC or a
  /// switch `a` to a switch `b` is a's uplink: the fabric is a tree built bottom-up, and a second uplink of
  /// the same vertex is an Error.
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

  /// The nvidia-smi code of a GPU pair as text ("NV18", "PIX", "X"), or "NET" across machines; for output.
  std::string pair_code(int src_gpu, int dst_gpu) const;
  /// NCCL's path type of a GPU pair: its machine's GpuPair::path, or Net across machines.
  models::PathType path_type(int src_gpu, int dst_gpu) const;
  /// NVLinks between two GPUs (per GPU behind an NVSwitch); 0 without NVLink and across machines.
  int pair_nvlinks(int src_gpu, int dst_gpu) const;
  /// The GPU model every GPU has ("H200"); empty without GPUs or with several models.
  std::string gpu_model() const;

  /// The route from `src` to `dst`: NVLink is preferred over PCIe, PCIe over the CPU interconnect and the
  /// network, and no route passes through a GPU. Inside a machine it is a shortest route over the machine's
  /// own vertices; between machines it is the cheapest combination of a route to a NIC of the source machine,
  /// the unique path through the fabric tree, and a route from a NIC of the destination machine (ties: lowest
  /// vertex ids). Deterministic, and independent of the cluster's size apart from the fabric's height.
  /// Unreachable: an empty Route with zero bandwidth.
  Route route(Vertex src, Vertex dst) const;
  /// Whether machines `a` and `b` (NodeInfo indices) are alike inside: the same vertex kinds by local index,
  /// the same in-machine hops (target, out-edge position, routing cost) over links of the same kind,
  /// bandwidth, latency and width, the same GPUs by local index (vertex, NVLinks, NVLink bandwidth, model),
  /// the same GpuPair matrix and NVLink fabric. Then every route inside `b` crosses, hop by hop, links like
  /// those of the same route inside `a`, and any two of its GPUs pair as the same two of `a` do. Linear in
  /// the machines' size; false for an index out of range.
  bool same_machine_shape(int a, int b) const;
  /// Routes from `src` to every vertex of its machine.
  RouteTree route_tree(Vertex src) const;
  /// The same into `t`, reusing its arrays (a caller that walks every GPU of a large cluster in turn).
  void route_tree(Vertex src, RouteTree& t) const;
  /// The same, copied from `twin`: the tree of the vertex at src's local index in a machine alike inside
  /// (same_machine_shape). Equal to route_tree(src) without its search: the same costs, each last edge the
  /// one at the same position of the corresponding vertex. A twin from a machine of another size or at
  /// another local index is not a twin: then the tree is searched.
  void route_tree_like(Vertex src, const RouteTree& twin, RouteTree& t) const;
  /// Where routes between machines leave `x`'s machine (or enter it); `tree` is route_tree(x).
  FabricEnds fabric_ends(Vertex x, const RouteTree& tree) const;
  /// The cheapest crossing from an end of `from` to a different end of `to` on the same fabric tree (ties:
  /// the lowest end indices, `from`'s first): the choice route() makes between machines. Empty when none.
  std::optional<FabricCrossing> cheapest_crossing(const FabricEnds& from, const FabricEnds& to) const;
  /// The fabric tree above `v`: its parent (null_vertex() at the top or off the tree), the edge up to it and
  /// the edge from it down to `v`. Defined only where the parent exists.
  Vertex fabric_parent(Vertex v) const { return parent_[v]; }
  Edge uplink(Vertex v) const { return up_edge(v); }
  Edge downlink(Vertex v) const { return down_edge(v); }

 private:
  Graph graph_;
  std::vector<int> local_index_;  ///< vertex -> index among its machine's vertices (-1: fabric)
  std::vector<std::vector<Vertex>> node_vertices_;  ///< per machine, its vertices
  /// vertex -> its parent in the fabric tree (NICs and switches; null_vertex() for none). Vertices, not edge
  /// descriptors: those point into edge lists that grow while the topology is built.
  std::vector<Vertex> parent_;
  /// vertex -> the position of its uplink (vertex -> parent) among its out-edges, and of the downlink
  /// (parent -> vertex) among the parent's: out-edge lists only grow, so positions stay valid, and a route
  /// finds a fabric edge in constant time instead of scanning a leaf's thousands of ports.
  std::vector<std::size_t> up_slot_, down_slot_;
  std::vector<std::int64_t> up_cost_;  ///< vertex -> routing cost of its uplink (0 without one)
  /// An out-edge that stays inside its machine, as route_tree relaxes it: the target's local index, the
  /// edge's position among the source's out-edges (positions stay valid, descriptors would not survive a
  /// copy of the topology) and its routing cost. Kept per vertex in out-edge order, so route_tree visits
  /// them as boost::out_edges would without walking the graph's edge lists.
  struct LocalHop {
    std::uint32_t to = 0;
    std::uint32_t slot = 0;
    std::int64_t cost = 0;
  };
  std::vector<std::vector<LocalHop>> local_hops_;  ///< per vertex
  /// The out-edge of `v` at position `slot` (LocalHop::slot).
  Edge out_edge_at(Vertex v, std::uint32_t slot) const;
  /// Sets t.via from t.via_slot for every vertex t reaches but its source (local index `s`).
  void fill_via(RouteTree& t, std::size_t s) const;
  Edge up_edge(Vertex v) const;
  Edge down_edge(Vertex v) const;
};

}  // namespace commsim::topo
