// The NCCL runtime model: host threads issue kernels onto streams; matched send/recv pairs become channel
// flows.
#include "commsim/sim/runtime.hpp"

#include <algorithm>
#include <bit>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <span>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include "commsim/models/hardware.hpp"

namespace commsim::sim {
namespace {

using models::Transport;

/// Whether the topology's fabric carries TCP sockets.
bool tcp_fabric(const topo::Topology& topo) {
  return topo.fabric && topo.fabric->kind == topo::FabricKind::Tcp;
}

/// A link direction (from -> to), a GPU's host-memory copy limit (gpu >= 0) or a CPU's memory shared by the
/// SHM transfers through it (memory). Its name is made when asked for (traces, errors): a 16,384-GPU
/// cluster has hundreds of thousands of links.
struct ResourceDef {
  double capacity;
  double saturation = 0;
  topo::Vertex from = 0, to = 0;
  int gpu = -1;
  bool out = false;     ///< for a GPU: "shm out", else "shm in"
  bool memory = false;  ///< the host memory of CPU `from`
};

/// A map from 64-bit keys (never ~0) to 32-bit values, open addressing with linear probing at most half full:
/// 16 bytes a slot (key and value in one cache line) instead of a node of a std::unordered_map (an all-to-all
/// over 1,024 GPUs keeps a million pairs).
class FlatIndex {
 public:
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  std::uint32_t find(std::uint64_t key) const {
    if (slots_.empty()) return kNone;
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return slots_[i].value;
      if (slots_[i].key == kEmpty) return kNone;
    }
  }
  /// Adds a key not in the map.
  void insert(std::uint64_t key, std::uint32_t value) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    std::size_t i = slot(key);
    while (slots_[i].key != kEmpty) i = (i + 1) & mask_;
    slots_[i] = {key, value};
    ++size_;
  }

 private:
  static constexpr std::uint64_t kEmpty = std::numeric_limits<std::uint64_t>::max();
  struct Slot {
    std::uint64_t key = kEmpty;
    std::uint32_t value = 0;
  };
  std::size_t slot(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9e3779b97f4a7c15ULL) >> shift_) & mask_;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    const std::size_t n = old.empty() ? 64 : 2 * old.size();
    slots_.assign(n, Slot{});
    mask_ = n - 1;
    shift_ = 64 - std::countr_zero(n);
    size_ = 0;
    for (const Slot& s : old) {
      if (s.key != kEmpty) insert(s.key, s.value);
    }
  }
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  int shift_ = 0;
  std::size_t size_ = 0;
};

/// Routes (resource ids) stored back to back in fixed blocks, so a stored route never moves (flows keep
/// pointers into it) and costs its ids alone, not a vector and an allocation each. A stored route is named by
/// a 32-bit position: block number x kBlock + offset (blocks double from 1,024 ids up to kBlock; a route
/// longer than kBlock gets a block spanning several numbers).
class RouteArena {
 public:
  static constexpr std::size_t kBlock = std::size_t{1} << 18;  ///< ids per block number (1 MiB)
  /// Stores `route` (with `prefix` ids of room before it, written by the caller through at()); returns its
  /// position.
  std::uint32_t store(const std::vector<int>& route, std::size_t prefix = 0) {
    const std::size_t need = route.size() + prefix;
    if (need > size_ - used_) {
      size_ = std::max(need, std::min(kBlock, 2 * size_));
      const std::size_t numbers = (size_ + kBlock - 1) / kBlock;
      if (base_.size() + numbers > (std::size_t{1} << 32) / kBlock) {
        throw Error("the routes of this run exceed 2^32 links in all");
      }
      blocks_.push_back(std::make_unique_for_overwrite<int[]>(size_));
      for (std::size_t j = 0; j < numbers; ++j) base_.push_back(blocks_.back().get() + j * kBlock);
      first_ = base_.size() - numbers;
      used_ = 0;
    }
    const std::size_t at = first_ * kBlock + used_ + prefix;
    std::copy(route.begin(), route.end(), blocks_.back().get() + used_ + prefix);
    used_ += need;
    return static_cast<std::uint32_t>(at);
  }
  int* at(std::uint32_t pos) { return base_[pos / kBlock] + pos % kBlock; }
  const int* at(std::uint32_t pos) const { return base_[pos / kBlock] + pos % kBlock; }

 private:
  std::vector<std::unique_ptr<int[]>> blocks_;
  std::vector<int*> base_;  ///< per block number, where its ids start
  std::size_t first_ = 0;   ///< the last block's first number
  std::size_t size_ = 512;  ///< ids in the last block (the first has 1,024)
  std::size_t used_ = 512;
};

}  // namespace

struct Runtime::Impl {
  std::vector<ResourceDef> resources;
  std::vector<std::string> names;  ///< resource names made so far (name())
  /// The last run's flow network memory, emptied, for the next run (FlowNetwork::Storage).
  FlowNetwork::Storage spare_net;
  const std::string& name(const topo::Topology& topo, int r) {
    if (names.empty()) names.resize(resources.size());
    std::string& n = names[static_cast<std::size_t>(r)];
    if (n.empty()) {
      const ResourceDef& d = resources[static_cast<std::size_t>(r)];
      n = d.gpu >= 0 ? topo.gpus[static_cast<std::size_t>(d.gpu)].name + (d.out ? " shm out" : " shm in")
          : d.memory ? topo.vertex(d.from).name + " memory (shm)"
                     : topo.vertex(d.from).name + "->" + topo.vertex(d.to).name;
    }
    return n;
  }
  std::vector<int> shm_out, shm_in;                ///< virtual host-memory copy limits per GPU
  std::unordered_map<topo::Vertex, int> shm_host;  ///< CPU vertex -> its memory, shared by SHM transfers
  /// One per GPU pair that a run used (an all-to-all over 1,024 GPUs: a million), 8 bytes: where its P2P
  /// route is in the arena, its length and its PairInfo, interned (pairs the model sees alike share one).
  /// The routes over host memory and through a NIC inside the machine (rare) are kept apart, in `other`.
  struct OtherRoutes {
    std::vector<int> shm, net;
    bool shm_done = false, net_done = false;
  };
  struct PairCache {
    static constexpr std::uint32_t kLenBits = 10;
    /// A length of kLongLen: the route is longer, its length is the arena id before it.
    static constexpr std::uint32_t kLongLen = (std::uint32_t{1} << kLenBits) - 1;
    std::uint32_t pos = 0;       ///< in the arena
    std::uint32_t len_info = 0;  ///< length (low kLenBits bits) | index in `infos` << kLenBits; 0: none
    std::uint32_t info() const { return len_info >> kLenBits; }
  };
  std::span<const int> route(const PairCache& pc) const {
    const int* at = routes.at(pc.pos);
    const std::uint32_t len = pc.len_info & PairCache::kLongLen;
    return {at, len == PairCache::kLongLen ? static_cast<std::size_t>(at[-1]) : len};
  }
  /// Up to kDenseGpus GPUs the pairs are a dense n x n table (calloc'ed, so a row takes memory once a run
  /// uses a pair of it: 8 MB for every pair of 1,024 GPUs); above it, `pairs` in order of first use and
  /// their index in `pair_index` (16 bytes a slot at half load).
  static constexpr std::size_t kDenseGpus = 2048;
  std::size_t n_gpus = 0;
  struct FreeDeleter {
    void operator()(PairCache* p) const { std::free(p); }
  };
  std::unique_ptr<PairCache[], FreeDeleter> dense;
  std::vector<PairCache> pairs;
  FlatIndex pair_index;  ///< by src << 32 | dst, above kDenseGpus GPUs
  /// The pair's entry, or one with len_info 0 if it has none yet.
  PairCache find_pair(int src, int dst) const {
    if (n_gpus > kDenseGpus) {
      const std::uint32_t at = pair_index.find(key(src, dst));
      return at == FlatIndex::kNone ? PairCache{} : pairs[at];
    }
    if (!dense || src < 0 || dst < 0 || static_cast<std::size_t>(src) >= n_gpus ||
        static_cast<std::size_t>(dst) >= n_gpus) {
      return {};  // an unknown GPU is reported by entry()
    }
    return dense[static_cast<std::size_t>(src) * n_gpus + static_cast<std::size_t>(dst)];
  }
  /// Whether prefetch_pair acts: on a dense table of 256 GPUs or more (512 KB and up; a larger cluster's
  /// hash index is not fetched).
  bool fetches_pairs() const { return dense && n_gpus >= 256 && n_gpus <= kDenseGpus; }
  /// A hint: the pair (src, dst) will soon be looked up, so its entry of the dense table is fetched now.
  [[gnu::always_inline]] void prefetch_pair(int src, int dst) const {
    if (!fetches_pairs() || src < 0 || dst < 0 || static_cast<std::size_t>(src) >= n_gpus ||
        static_cast<std::size_t>(dst) >= n_gpus) {
      return;
    }
    __builtin_prefetch(&dense[static_cast<std::size_t>(src) * n_gpus + static_cast<std::size_t>(dst)]);
  }
  void add_pair(int src, int dst, const PairCache& pc) {
    if (n_gpus > kDenseGpus) {
      if (pairs.size() >= FlatIndex::kNone) throw Error("more than 2^32 GPU pairs");
      pair_index.insert(key(src, dst), static_cast<std::uint32_t>(pairs.size()));
      pairs.push_back(pc);
      return;
    }
    if (!dense) {
      dense.reset(static_cast<PairCache*>(std::calloc(n_gpus * n_gpus, sizeof(PairCache))));
      if (!dense) throw std::bad_alloc();
    }
    dense[static_cast<std::size_t>(src) * n_gpus + static_cast<std::size_t>(dst)] = pc;
  }
  RouteArena routes;
  std::deque<models::PairInfo> infos;  ///< distinct PairInfos (references to them stay valid)
  std::map<std::tuple<int, int, double, bool, bool, Picoseconds, double, bool>, std::uint32_t> info_index;
  std::unordered_map<std::uint64_t, OtherRoutes> other;  ///< by pair key
  /// The pair's entry, made on first use (what Runtime::pair returns the info of).
  PairCache entry(const topo::Topology& topo, int src, int dst);
  const models::PairInfo& info(const PairCache& pc) const { return infos[pc.info()]; }
  std::uint32_t intern(const models::PairInfo& info);
  static std::uint64_t key(int src, int dst) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)) << 32) |
           static_cast<std::uint32_t>(dst);
  }
  std::vector<int> resources_of(const topo::Route& r) const {
    std::vector<int> out;
    out.reserve(r.edges.size());
    for (const topo::Edge& e : r.edges) out.push_back(resource_of(e));
    return out;
  }
  /// A link's resource: the links are the first resources, in the graph's edge order (the Runtime checks).
  int resource_of(const topo::Edge& e) const { return (*route_graph)[e].id; }
  const topo::Graph* route_graph = nullptr;
  std::vector<int> scratch_route;  ///< entry()'s route before it is stored
  /// GPUs' routes inside their machine, shared by the pairs from a GPU (entry), its machine exits
  /// (exits_of) and its NIC (own_nic_of): a direct-mapped cache, GPU g in slot g % kTreeSlots, so up to
  /// kTreeSlots GPUs each get one Dijkstra, and larger clusters keep ~2 KB a slot (an HGX node's ~50
  /// vertices at 40 bytes), not a tree per GPU (27 MB for 16,384), recomputing a tree when its slot was
  /// taken by another GPU (each GPU's exits and NIC are kept, so that is mostly entry's sources).
  static constexpr std::size_t kTreeSlots = 64;
  std::vector<topo::RouteTree> trees;
  std::vector<int> tree_gpu;  ///< per slot: the GPU whose tree it holds, -1 none
  const topo::RouteTree& tree_of(const topo::Topology& topo, int g) {
    if (trees.empty()) {
      trees.resize(std::min(kTreeSlots, topo.gpus.size()));
      tree_gpu.assign(trees.size(), -1);
    }
    const std::size_t slot = static_cast<std::size_t>(g) % trees.size();
    if (tree_gpu[slot] != g) {
      const topo::GpuInfo& gi = topo.gpus[static_cast<std::size_t>(g)];
      const int m = model_of(topo, gi.node);
      if (m >= 0 && m == gi.node) return model_tree(topo, g);  // a model machine's GPU: its kept tree
      tree_gpu[slot] = -1;  // (until its tree is whole: a search that throws leaves no half tree named)
      if (const topo::RouteTree* model = m >= 0 ? twin_tree(topo, gi, m) : nullptr) {
        topo.route_tree_like(gi.vertex, *model, trees[slot]);
      } else {
        topo.route_tree(gi.vertex, trees[slot]);
      }
      tree_gpu[slot] = g;
    }
    return trees[slot];
  }
  /// Machines alike inside (Topology::same_machine_shape) share their GPUs' route trees: a GPU's tree is
  /// copied from the GPU at its place in the first machine found alike (its model), not searched. Each
  /// machine is compared with up to kModelMachines models, once; a cluster of one server type searches 8
  /// trees, not 16,384.
  static constexpr std::size_t kModelMachines = 4;
  /// By machine: its model machine (itself for a model), -1: none, -2: not yet compared.
  std::vector<int> machine_model;
  std::vector<int> models_found;                         ///< the model machines
  std::unordered_map<int, topo::RouteTree> model_trees;  ///< by GPU of a model machine
  /// Machine `node`'s model: the first model machine alike inside (itself when it became one), -1 for none.
  /// Compared once per machine, kept for the runtime's life.
  int model_of(const topo::Topology& topo, int node) {
    if (node < 0 || static_cast<std::size_t>(node) >= topo.nodes.size()) return -1;
    if (machine_model.empty()) machine_model.assign(topo.nodes.size(), -2);
    int& m = machine_model[static_cast<std::size_t>(node)];
    if (m == -2) {
      m = -1;
      for (int f : models_found) {
        if (topo.same_machine_shape(f, node)) {
          m = f;
          break;
        }
      }
      if (m < 0 && models_found.size() < kModelMachines) {
        models_found.push_back(node);
        m = node;
      }
    }
    return m;
  }
  /// The kept tree of `g`, a GPU of a model machine (searched the first time).
  const topo::RouteTree& model_tree(const topo::Topology& topo, int g) {
    auto [it, fresh] = model_trees.try_emplace(g);
    if (fresh) {
      try {
        topo.route_tree(topo.gpus[static_cast<std::size_t>(g)].vertex, it->second);
      } catch (...) {
        model_trees.erase(it);  // no half tree kept
        throw;
      }
    }
    return it->second;
  }
  /// The tree to copy for GPU `gi` of a machine whose model is `m` (another machine), or null.
  const topo::RouteTree* twin_tree(const topo::Topology& topo, const topo::GpuInfo& gi, int m) {
    const int node = gi.node;
    // The model machine's GPU at gi's place (same_machine_shape matched the GPU lists place by place).
    const std::vector<int>& mine = topo.nodes[static_cast<std::size_t>(node)].gpus;
    const std::vector<int>& theirs = topo.nodes[static_cast<std::size_t>(m)].gpus;
    const auto at = std::find(mine.begin(), mine.end(), gi.index);
    if (at == mine.end()) return nullptr;
    return &model_tree(topo, theirs[static_cast<std::size_t>(at - mine.begin())]);
  }
  /// Appends the resources of the tree's route to `dst` (walked back from it, so reversed after) to `out`,
  /// adds its latency (picoseconds) to `latency` and sets `bandwidth` to its bottleneck (bytes/s), as
  /// Topology::route reports them. False when unreachable or dst is the source (nothing appended or set).
  bool walk(const topo::RouteTree& t, topo::Vertex dst, std::vector<int>& out, Picoseconds& latency,
            double& bandwidth) const {
    if (dst == t.src || !t.reaches(dst)) return false;
    const topo::Graph& g = *route_graph;
    const std::size_t at = out.size();
    bandwidth = std::numeric_limits<double>::infinity();
    for (topo::Vertex w = dst; w != t.src;) {
      const topo::Edge e = t.via[static_cast<std::size_t>((*t.local)[w])];
      const topo::LinkInfo& l = g[e];
      out.push_back(l.id);
      bandwidth = std::min(bandwidth, l.bandwidth);
      latency += l.latency;
      w = boost::source(e, g);
    }
    std::reverse(out.begin() + static_cast<std::ptrdiff_t>(at), out.end());
    return true;
  }

  /// Where one GPU's routes leave and enter its machine (Topology::fabric_ends) and the route pieces to and
  /// from each end, as resources with their latency and bottleneck: computed once per GPU, so a route between
  /// machines is a choice of ends (Topology::cheapest_crossing) and a concatenation, not two Dijkstras.
  struct Piece {
    std::vector<int> resources;
    Picoseconds latency = 0;
    double bandwidth = std::numeric_limits<double>::infinity();
  };
  struct Exits {
    bool done = false;
    topo::FabricEnds ends;
    std::vector<Piece> out, in;  ///< GPU -> end i, end i -> GPU (where made[i])
    std::vector<char> made;
  };
  std::vector<Exits> exits;  ///< by GPU
  /// By vertex: the resource of its fabric uplink / downlink (-1: not yet).
  std::vector<int> up_res, down_res;

  Exits& exits_of(const topo::Topology& topo, int g) {
    if (exits.empty()) exits.resize(topo.gpus.size());
    Exits& x = exits[static_cast<std::size_t>(g)];
    if (x.done) return x;
    const topo::Vertex v = topo.gpus[static_cast<std::size_t>(g)].vertex;
    const topo::RouteTree& t = tree_of(topo, g);
    x.ends = topo.fabric_ends(v, t);
    x.out.resize(x.ends.size());
    x.in.resize(x.ends.size());
    x.made.assign(x.ends.size(), 0);
    // The pieces of the cheapest ends now (most routes use them), the others when a route first does.
    for (std::size_t i = 0; i < x.ends.size(); ++i) {
      if (x.ends.cost[i] == x.ends.cost[x.ends.by_cost.front()]) make_piece(x, t, i);
    }
    x.done = true;
    return x;
  }
  void make_piece(Exits& x, const topo::RouteTree& t, std::size_t i) {
    const topo::Graph& graph = *route_graph;
    // Out: the tree's route to the end. In: the same edges backwards, each taken in the other direction (what
    // Topology::route does).
    const topo::Route r = t.to(graph, x.ends.v[i]);
    Piece out, in;
    for (const topo::Edge& e : r.edges) {
      out.resources.push_back(resource_of(e));
      out.latency += graph[e].latency;
      out.bandwidth = std::min(out.bandwidth, graph[e].bandwidth);
    }
    for (std::size_t k = r.edges.size(); k-- > 0;) {
      const topo::Edge e = r.edges[k];
      const topo::Edge back = boost::edge(boost::target(e, graph), boost::source(e, graph), graph).first;
      in.resources.push_back(resource_of(back));
      in.latency += graph[back].latency;
      in.bandwidth = std::min(in.bandwidth, graph[back].bandwidth);
    }
    x.out[i] = std::move(out);
    x.in[i] = std::move(in);
    x.made[i] = 1;
  }
  const Piece& piece(const topo::Topology& topo, int g, std::size_t i, bool out) {
    Exits& x = exits[static_cast<std::size_t>(g)];
    if (!x.made[i]) make_piece(x, tree_of(topo, g), i);
    return out ? x.out[i] : x.in[i];
  }
  int fabric_resource(const topo::Topology& topo, topo::Vertex v, bool up) {
    std::vector<int>& memo = up ? up_res : down_res;
    if (memo.empty()) memo.assign(boost::num_vertices(*route_graph), -1);
    int& r = memo[v];
    if (r < 0) r = resource_of(up ? topo.uplink(v) : topo.downlink(v));
    return r;
  }
  /// The route between GPUs of different machines, as Topology::route finds it, from the cached pieces.
  /// False when there is none.
  bool cross_route(const topo::Topology& topo, int src, int dst, std::vector<int>& path, Picoseconds& latency,
                   double& bandwidth) {
    const Exits& a = exits_of(topo, src);
    const Exits& b = exits_of(topo, dst);  // (no reallocation: `exits` is sized once)
    const std::optional<topo::FabricCrossing> x = topo.cheapest_crossing(a.ends, b.ends);
    if (!x) return false;
    const topo::Graph& graph = *route_graph;
    const Piece& out = piece(topo, src, x->a, true);
    const Piece& in = piece(topo, dst, x->b, false);
    path.reserve(out.resources.size() + static_cast<std::size_t>(x->up + x->down) + in.resources.size());
    path = out.resources;
    latency = out.latency + in.latency;
    bandwidth = std::min(out.bandwidth, in.bandwidth);
    auto hop = [&](topo::Vertex v, bool up) {
      path.push_back(fabric_resource(topo, v, up));
      const topo::LinkInfo& l = graph[up ? topo.uplink(v) : topo.downlink(v)];
      latency += l.latency;
      bandwidth = std::min(bandwidth, l.bandwidth);
    };
    topo::Vertex v = a.ends.v[x->a];
    for (int i = 0; i < x->up; ++i, v = topo.fabric_parent(v)) hop(v, true);
    // Down towards b: b's ancestors' downlinks, from the top.
    const std::size_t at = path.size();
    v = b.ends.v[x->b];
    for (int i = 0; i < x->down; ++i, v = topo.fabric_parent(v)) hop(v, false);
    std::reverse(path.begin() + static_cast<std::ptrdiff_t>(at), path.end());
    path.insert(path.end(), in.resources.begin(), in.resources.end());
    return !path.empty();
  }
  std::vector<int> own_nic;  ///< per GPU: own_nic_of(), filled on first use (-2: not yet)

  /// The NIC (index within its machine) GPU `g` reaches over PCIe alone - no NVLink hop through another GPU,
  /// no link between the CPUs - the cheapest if several; -1 when none (NCCL would reach a NIC only through
  /// another GPU or the other socket, and does not enter or leave the machine there). As NCCL ranks paths
  /// (PIX/PXB before PHB, src/graph/search.cc raises typeInter step by step), a route through a host bridge
  /// counts only where no GPU of the machine reaches a NIC through PCIe switches alone.
  int own_nic_of(const topo::Topology& topo, int g) {
    if (own_nic.empty()) own_nic.assign(topo.gpus.size(), -2);
    if (own_nic[static_cast<std::size_t>(g)] != -2) return own_nic[static_cast<std::size_t>(g)];
    const topo::Graph& graph = topo.graph();
    const auto& node_gpus =
        topo.nodes[static_cast<std::size_t>(topo.gpus[static_cast<std::size_t>(g)].node)].gpus;
    std::vector<std::pair<int, bool>> reach;  // per GPU of the machine: NIC, through a host bridge
    for (int x : node_gpus) {
      const topo::GpuInfo& gpu = topo.gpus[static_cast<std::size_t>(x)];
      const topo::RouteTree& t = tree_of(topo, x);
      int known = -1;
      bool bridged = false;
      double best = 0;
      for (int nic : topo.nodes[static_cast<std::size_t>(gpu.node)].nics) {
        const topo::NicInfo& info = topo.nics[static_cast<std::size_t>(nic)];
        if (info.vertex == t.src || !t.reaches(info.vertex)) continue;
        // The route's edges, walked back from the NIC (their order does not matter here).
        bool own = true, via_bridge = false;
        int edges = 0;
        for (topo::Vertex w = info.vertex; w != t.src; ++edges) {
          const topo::Edge e = t.via[static_cast<std::size_t>((*t.local)[w])];
          const topo::LinkKind k = graph[e].kind;
          own = own && k != topo::LinkKind::NvLink && k != topo::LinkKind::Smp;
          const topo::VertexKind v = graph[w].kind;  // the edge's target
          via_bridge = via_bridge || v == topo::VertexKind::HostBridge || v == topo::VertexKind::Cpu;
          w = boost::source(e, graph);
        }
        const double cost = static_cast<double>(edges);
        if (own && (known < 0 || (bridged && !via_bridge) || (bridged == via_bridge && cost < best))) {
          known = info.local_index;
          bridged = via_bridge;
          best = cost;
        }
      }
      reach.emplace_back(known, bridged);
    }
    const bool switched =
        std::any_of(reach.begin(), reach.end(), [](const auto& r) { return r.first >= 0 && !r.second; });
    for (std::size_t i = 0; i < node_gpus.size(); ++i) {
      own_nic[static_cast<std::size_t>(node_gpus[i])] = switched && reach[i].second ? -1 : reach[i].first;
    }
    return own_nic[static_cast<std::size_t>(g)];
  }
};

Runtime::Runtime(const topo::Topology& topo, const models::TransferModel& model)
    : topo_(topo), model_(model), impl_(std::make_unique<Impl>()) {
  impl_->n_gpus = topo.gpus.size();
  const topo::Graph& g = topo.graph();
  impl_->route_graph = &g;
  const bool tcp = tcp_fabric(topo);
  // Links, then two host-memory limits a GPU (then one memory a CPU, a few: not reserved).
  impl_->resources.reserve(boost::num_edges(g) + 2 * topo.gpus.size());
  impl_->shm_out.reserve(topo.gpus.size());
  impl_->shm_in.reserve(topo.gpus.size());
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    const topo::LinkInfo& l = g[*e];
    if (l.id != static_cast<int>(impl_->resources.size())) {
      throw Error("link " + std::to_string(l.id) + " out of the graph's edge order (not added by add_link)");
    }
    impl_->resources.push_back({l.bandwidth * model.link_efficiency(l.kind, tcp),
                                model.link_saturation(l.kind), boost::source(*e, g), boost::target(*e, g)});
  }
  const double shm = model.shm_bandwidth();
  for (const topo::GpuInfo& gpu : topo.gpus) {
    impl_->shm_out.push_back(shm > 0 ? static_cast<int>(impl_->resources.size()) : -1);
    if (shm > 0) impl_->resources.push_back({shm, 0, 0, 0, gpu.index, true});
    impl_->shm_in.push_back(shm > 0 ? static_cast<int>(impl_->resources.size()) : -1);
    if (shm > 0) impl_->resources.push_back({shm, 0, 0, 0, gpu.index, false});
  }
  // One host memory per CPU (NUMA domain) that SHM transfers cross, shared by every GPU copying through it.
  if (const double host = model.shm_host_memory_bandwidth(); host > 0) {
    for (auto [v, end] = boost::vertices(g); v != end; ++v) {
      if (g[*v].kind != topo::VertexKind::Cpu) continue;
      impl_->shm_host.emplace(*v, static_cast<int>(impl_->resources.size()));
      impl_->resources.push_back({host, 0, *v, *v, -1, false, true});
    }
  }
}

namespace {
/// A thread's last destroyed Runtime's flow network memory (FlowNetwork::Storage), for the next Runtime's
/// first run: a sweep of what-ifs builds a Runtime per cluster, and each would otherwise grow its arrays from
/// nothing. Only capacity travels (and the recent-class slots, voided by their epoch), so no result changes.
/// Kept only up to kKeepSpareBytes, so a huge run's memory is not held once its Runtime is gone.
/// At thread exit it is destroyed before any static object: a Runtime destroyed after it (a static one, or
/// one owned by another thread_local) finds t_spare_gone set and keeps away from it.
thread_local bool t_spare_gone = false;
struct SpareNet {
  FlowNetwork::Storage storage;
  ~SpareNet() { t_spare_gone = true; }
};
thread_local SpareNet t_spare_net;
constexpr std::size_t kKeepSpareBytes = std::size_t{16} << 20;
}  // namespace

Runtime::~Runtime() {
  if (impl_ && !t_spare_gone && !impl_->spare_net.class_lists.empty() &&
      impl_->spare_net.bytes() <= kKeepSpareBytes) {
    t_spare_net.storage = std::move(impl_->spare_net);
  }
}

std::vector<int> Runtime::via_nearest(int src, int dst, topo::VertexKind kind, const std::string& none,
                                      topo::Vertex* via) {
  const topo::GpuInfo& a = topo_.gpus.at(src);
  const topo::Graph& g = topo_.graph();
  const topo::RouteTree from_a = topo_.route_tree(a.vertex);
  int best = -1, best_hops = 0;
  for (const topo::Vertex v : from_a.vertices) {  // the machine's vertices, in vertex order
    const topo::VertexInfo& info = topo_.vertex(v);
    const int h = from_a.hops(g, v);
    if (info.kind != kind || info.node != a.node || h == 0) continue;
    if (best < 0 || h < best_hops) {
      best = static_cast<int>(v);
      best_hops = h;
    }
  }
  if (best < 0) throw SimulationError(a.name + " -> " + topo_.gpus.at(dst).name + ": " + none);
  std::vector<int> path = impl_->resources_of(from_a.to(g, static_cast<topo::Vertex>(best)));
  const topo::Vertex via_vertex = static_cast<topo::Vertex>(best);
  if (via) *via = via_vertex;
  const auto rest = impl_->resources_of(topo_.route(via_vertex, topo_.gpus.at(dst).vertex));
  path.insert(path.end(), rest.begin(), rest.end());
  return path;
}

const models::PairInfo& Runtime::pair(int src, int dst) {
  return impl_->info(impl_->entry(topo_, src, dst));
}

std::uint32_t Runtime::Impl::intern(const models::PairInfo& info) {
  const auto k =
      std::make_tuple(static_cast<int>(info.path), info.nvlinks, info.nvlink_bandwidth, info.same_node,
                      info.tcp, info.path_latency, info.route_bandwidth, info.nvswitch);
  auto [it, fresh] = info_index.try_emplace(k, static_cast<std::uint32_t>(infos.size()));
  if (fresh) infos.push_back(info);
  return it->second;
}

Runtime::Impl::PairCache Runtime::Impl::entry(const topo::Topology& topo, int src, int dst) {
  if (const PairCache found = find_pair(src, dst); found.len_info != 0) return found;
  const topo::GpuInfo& a = topo.gpus.at(src);
  const topo::GpuInfo& b = topo.gpus.at(dst);
  models::PairInfo info;
  std::vector<int>& p2p = scratch_route;
  p2p.clear();
  // Inside one machine a route is the source's route tree walked to the destination (what Topology::route
  // does); every pair from one source shares its tree (tree_of).
  // Between machines it is composed from the pieces cached per GPU (cross_route).
  if (topo.vertex(a.vertex).node == topo.vertex(b.vertex).node && a.node >= 0) {
    if (!walk(tree_of(topo, src), b.vertex, p2p, info.path_latency, info.route_bandwidth)) {
      info.route_bandwidth = 0;
    }
  } else {
    cross_route(topo, src, dst, p2p, info.path_latency, info.route_bandwidth);
  }
  if (p2p.empty()) {
    throw SimulationError("no path from " + a.name + " to " + b.name + " in the topology");
  }
  if (p2p.size() > std::numeric_limits<std::uint32_t>::max()) throw Error("a route of over 2^32 links");
  info.path = topo.path_type(src, dst);
  info.nvlinks = topo.pair_nvlinks(src, dst);
  info.nvlink_bandwidth = a.nvlinks > 0 ? a.nvlink_bandwidth / a.nvlinks : 0;
  info.same_node = a.node == b.node;
  info.tcp = tcp_fabric(topo);
  info.nvswitch = info.same_node && info.path == models::PathType::Nvl && a.node >= 0 &&
                  static_cast<std::size_t>(a.node) < topo.nodes.size() &&
                  topo.nodes[static_cast<std::size_t>(a.node)].nvlink_fabric == "nvswitch";
  const std::uint32_t kind = intern(info);
  if (kind >= (std::uint32_t{1} << (32 - PairCache::kLenBits))) {
    throw Error("more than 2^22 kinds of GPU pair in one run");
  }
  // A route of kLongLen links or more keeps its length in the arena, just before it.
  const bool long_route = p2p.size() >= PairCache::kLongLen;
  if (long_route && p2p.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw Error("a route of over 2^31 links");
  }
  PairCache pc;
  pc.pos = routes.store(p2p, long_route ? 1 : 0);
  if (long_route) routes.at(pc.pos)[-1] = static_cast<int>(p2p.size());
  pc.len_info = (long_route ? PairCache::kLongLen : static_cast<std::uint32_t>(p2p.size())) |
                kind << PairCache::kLenBits;
  add_pair(src, dst, pc);
  return pc;
}

namespace {

struct KernelInstance {
  const KernelSpec* spec = nullptr;
  int iteration = 0;
  int gpu = 0;  ///< spec->gpu, or the rank's GPU for a kernel of every rank
  /// When it can start (issued + the launch latency) until it starts, then when it started: one field, as
  /// nothing reads the first once the second is known.
  Picoseconds start = 0;
  Picoseconds end = -1;
  // 48 bytes: a 16,384-GPU weight push has 12.6 M of them.
  int pending : 27 = 0;
  unsigned started : 1 = 0;  ///< `start` is the start, not the ready time
  unsigned shared : 1 = 0;
  unsigned marker : 1 = 0;  ///< a pure stream wait: no gap, no trace
  unsigned graph : 1 = 0;   ///< inside a captured CUDA graph: the graph's kernel gap, no host launch
  unsigned join : 1 = 0;    ///< its dependencies are a graph's cross-GPU join (ends + the model's join time)
  int coll_seq = -1;        ///< the k-th collective of this GPU on its communicator
  int sid = -1;             ///< its (GPU, stream), numbered in order of first use
  /// Its dependencies, kernels (of other streams) that must end first: -1 for none, else deps_pool[deps] is
  /// their count and they follow it (one pool: millions of kernels).
  int deps = -1;
};
static_assert(sizeof(KernelInstance) <= 48);

/// A stream's kernels not yet started, oldest first: nothing allocated while empty (a 16,384-GPU run has a
/// stream per GPU; a std::deque takes 576 bytes even empty).
class KernelQueue {
 public:
  bool empty() const { return head_ == items_.size(); }
  int front() const { return items_[head_]; }
  void push_back(int k) { items_.push_back(k); }
  void pop_front() {
    if (++head_ == items_.size()) {
      items_.clear();
      head_ = 0;
    } else if (head_ >= 64 && 2 * head_ >= items_.size()) {  // a stream that never empties: drop the front
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }

 private:
  std::vector<int> items_;
  std::size_t head_ = 0;
};

/// Kernel instances by id (ids in issue order), kept in a ring: the ids issued and not yet released. Ended
/// kernels at the front are released when the ring is full instead of growing it, so a run keeps the kernels
/// in flight, not every kernel it issues (a 16,384-GPU weight push issues 12.6 M).
class KernelStore {
 public:
  KernelInstance& operator[](int k) {
    assert(k >= base_ && k < next_);
    return ring_[static_cast<std::size_t>(k) & mask_];
  }
  const KernelInstance& operator[](int k) const {
    assert(k >= base_ && k < next_);
    return ring_[static_cast<std::size_t>(k) & mask_];
  }
  /// Ids issued so far; the next kernel gets this id.
  int size() const { return next_; }
  /// The first id not released; ids below it ended and are gone.
  int base() const { return base_; }
  bool released(int k) const { return k < base_; }
  /// Appends `ki`; first releases front kernels `releasable` accepts (in id order, stopping at the first it
  /// refuses) when the ring is full. Returns its id.
  template <typename Releasable>
  int push(const KernelInstance& ki, Releasable releasable) {
    if (next_ == std::numeric_limits<int>::max()) throw Error("more than 2^31 - 1 kernels in one run");
    if (static_cast<std::size_t>(next_ - base_) == ring_.size()) {
      while (base_ < next_ && releasable(ring_[static_cast<std::size_t>(base_) & mask_])) ++base_;
      if (static_cast<std::size_t>(next_ - base_) == ring_.size()) grow();
    }
    ring_[static_cast<std::size_t>(next_) & mask_] = ki;
    return next_++;
  }

 private:
  void grow() {
    const std::size_t n = ring_.empty() ? 16 : 2 * ring_.size();  // small runs stay small
    std::vector<KernelInstance> bigger(n);
    for (int k = base_; k < next_; ++k) bigger[static_cast<std::size_t>(k) & (n - 1)] = (*this)[k];
    ring_ = std::move(bigger);
    mask_ = n - 1;
  }
  std::vector<KernelInstance> ring_;
  std::size_t mask_ = 0;
  int base_ = 0, next_ = 0;
};

std::uint64_t pair_key(int a, int b) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
}

/// Whether kernel `k` both sends and receives (its channels' warps are then split between them).
bool sends_and_receives(const KernelSpec& k) {
  bool has_send = false, has_recv = false;
  for (const OpSpec& op : k.ops) {
    has_send = has_send || op.kind == OpSpec::Kind::Send;
    has_recv = has_recv || op.kind == OpSpec::Kind::Recv;
  }
  return has_send && has_recv;
}

bool is_marker(const KernelSpec& k) {
  return k.ops.empty() && !k.collective && k.compute == 0 && !k.wait_streams.empty();
}

struct Posted {
  int kernel;
  int op;
};

/// Posts waiting on one (communicator, src, dst), oldest first.
struct PostKey {
  int comm, src, dst;
  bool operator==(const PostKey& o) const { return comm == o.comm && src == o.src && dst == o.dst; }
};
/// Posts waiting per (communicator, src, dst), oldest first: an open-addressing table (linear probing,
/// backward-shift deletion) of each key's oldest post, the later ones of a key in a queue apart. An
/// all-to-all over 1,024 GPUs has half a million keys waiting at once, each used once; the table is released
/// when it empties.
class PostTable {
 public:
  /// Removes the oldest post waiting on `key` into `out`; false if none waits.
  bool pop(const PostKey& key, Posted& out) {
    if (size_ == 0) return false;
    std::size_t i = home(key);
    while (used(slots_[i]) && !(slots_[i].key == key)) i = (i + 1) & mask_;
    if (!used(slots_[i])) return false;
    Slot& s = slots_[i];
    out = s.first;
    if (s.more != kNone) {
      More& m = more_[s.more];
      s.first = m.items[m.head++];
      if (m.head == m.items.size()) {
        m.items.clear();
        m.head = 0;
        free_more_.push_back(s.more);
        s.more = kNone;
      }
      return true;
    }
    erase(i);
    return true;
  }
  /// Whether prefetch acts: only a table too large for the caches (an all-to-all's half a million keys).
  bool fetches() const { return slots_.size() >= kFetchAhead; }
  /// A hint: `key` will soon be popped or pushed, so its home slot is fetched now. (Always inlined: GCC drops
  /// a call to an out-of-line function that only prefetches, as if it did nothing.)
  [[gnu::always_inline]] void prefetch(const PostKey& key) const {
    if (fetches()) __builtin_prefetch(&slots_[home(key)]);
  }
  void push(const PostKey& key, Posted p) {
    if (4 * (size_ + 1) > 3 * slots_.size()) grow();
    std::size_t i = home(key);
    while (used(slots_[i]) && !(slots_[i].key == key)) i = (i + 1) & mask_;
    Slot& s = slots_[i];
    if (!used(s)) {
      s = Slot{key, p, kNone};
      ++size_;
      return;
    }
    if (s.more == kNone) {
      if (free_more_.empty()) {
        s.more = static_cast<std::uint32_t>(more_.size());
        more_.emplace_back();
      } else {
        s.more = free_more_.back();
        free_more_.pop_back();
      }
    }
    more_[s.more].items.push_back(p);
  }
  /// Calls f(key, posts) for every key with waiting posts, oldest first (in no particular key order).
  template <typename F>
  void for_each(F f) const {
    for (const Slot& s : slots_) {
      if (!used(s)) continue;
      std::vector<Posted> posts{s.first};
      if (s.more != kNone) {
        const More& m = more_[s.more];
        posts.insert(posts.end(), m.items.begin() + static_cast<std::ptrdiff_t>(m.head), m.items.end());
      }
      f(s.key, posts);
    }
  }

 private:
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::size_t kKeep = 1024;  ///< slots kept when the table empties
  /// Slots (768 KB) from which prefetch acts.
  static constexpr std::size_t kFetchAhead = std::size_t{1} << 15;
  /// 24 bytes; a free slot has communicator -1.
  struct Slot {
    PostKey key{-1, 0, 0};
    Posted first{};
    std::uint32_t more = kNone;  ///< index in more_ of its later posts
  };
  static bool used(const Slot& s) { return s.key.comm >= 0; }
  struct More {
    std::vector<Posted> items;
    std::size_t head = 0;
  };
  std::size_t home(const PostKey& k) const {
    std::uint64_t h = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.comm)) << 42) ^
                      (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.src)) << 21) ^
                      static_cast<std::uint32_t>(k.dst);
    h = (h ^ (h >> 31)) * 0x9e3779b97f4a7c15ULL;
    return static_cast<std::size_t>(h >> 32) & mask_;
  }
  void erase(std::size_t i) {
    // Backward shift: move later entries of the probe run into the hole unless their home lies in (i, j].
    for (std::size_t j = (i + 1) & mask_; used(slots_[j]); j = (j + 1) & mask_) {
      const std::size_t k = home(slots_[j].key);
      const bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
      if (stays) continue;
      slots_[i] = slots_[j];
      i = j;
    }
    slots_[i] = Slot{};
    if (--size_ == 0 && slots_.size() > kKeep) {  // a large table is released; a small one kept for reuse
      slots_ = {};
      mask_ = 0;
    }
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    const std::size_t n = old.empty() ? 16 : 2 * old.size();
    slots_.assign(n, Slot{});
    mask_ = n - 1;
    for (const Slot& s : old) {
      if (!used(s)) continue;
      std::size_t i = home(s.key);
      while (used(slots_[i])) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }
  std::vector<Slot> slots_;
  std::vector<More> more_;
  std::vector<std::uint32_t> free_more_;
  std::size_t size_ = 0;
  std::size_t mask_ = 0;
};

}  // namespace

KernelSpec p2p_kernel(int gpu, int stream, int comm, std::vector<OpSpec> ops, std::string name) {
  KernelSpec k;
  k.gpu = gpu;
  k.stream = stream;
  k.comm = comm;
  k.ops = std::move(ops);
  k.name = std::move(name);
  return k;
}

/// One run of one program: the state its events share and the steps that change it. Runtime::run builds one,
/// calls run() once and drops it. Simulated times are integer picoseconds.
///
/// The steps, in order: add the runtime's link resources to a fresh flow network, describe the communicators
/// to the model, let the host threads issue every iteration's kernels (each ready after the launch latency),
/// start every stream, run the events, then check that every kernel finished and sum what was measured.
/// While the events run, a kernel starts on its stream (try_start, kernel_start) once its stream and the
/// streams it waits on are free; its operations post sends and receives (matched ones become a transfer of
/// channel flows), start copies, or meet the other ranks of a collective; it ends when its last operation
/// does (kernel_op_done), which wakes its GPU's streams.
class Runtime::Execution {
 public:
  Execution(Runtime& runtime, const Program& program, Trace* trace, const RunOptions& options);
  /// Hands the flow network's memory back to the runtime for its next run.
  ~Execution() {
    try {
      impl_.spare_net = net_.release_storage();
    } catch (...) {  // out of memory while handing it on: the next run allocates afresh
      impl_.spare_net = {};
    }
  }
  Execution(const Execution&) = delete;
  Execution& operator=(const Execution&) = delete;
  /// Runs the program to its end; throws UsageError, SimulationError (deadlock, mismatch) or Interrupted.
  RunResult run();

 private:
  // In-flight transfers and collectives live in slots (reused); completion callbacks carry a slot number
  // and `this`, so they fit std::function's inline storage: no allocation per flow.
  /// 32 bytes (a million are in flight in an all-to-all over 1,024 GPUs): source and destination are the
  /// send's and receive's GPUs, the bytes the send's, the route the pair's (looked up again to start); its
  /// OpRecord, if it is recorded, in records_.
  struct TransferState {
    Posted s{}, r{};
    Picoseconds start = 0;
    std::uint32_t plan = 0;  ///< index in plan_list_
    int remaining = 0;       ///< parts still moving
  };
  static_assert(sizeof(TransferState) <= 32);
  static constexpr std::uint32_t kNoRecord = std::numeric_limits<std::uint32_t>::max();
  /// Flow tags (FlowNetwork::start_tagged): a transfer's part is slot << kPartBits | part (parts beyond
  /// kPartLimit, which no model makes, complete through a callback); a collective's flow kCollTag | slot.
  static constexpr int kPartBits = 20;
  static constexpr std::size_t kPartLimit = std::size_t{1} << kPartBits;
  static constexpr FlowNetwork::Tag kCollTag = FlowNetwork::Tag{1} << 62;
  /// The runtime's events (EventQueue::at_tagged): the step in the upper half of the tag, its kernel,
  /// transfer or collective slot in the lower.
  enum class Ev : std::uint32_t { KernelStart, KernelOpDone, StartParts, FinishTransfer, StartCollFlows };
  static EventQueue::Tag event_tag(Ev ev, int x) {
    return static_cast<EventQueue::Tag>(ev) << 32 | static_cast<std::uint32_t>(x);
  }
  struct CollState {
    std::vector<int> group;
    int remaining = 0;  ///< flows still moving
    bool recorded = false;
    std::size_t record = 0;
    Picoseconds start = 0;
    const models::CollectivePlan* plan = nullptr;
    int comm = 0;
  };
  /// What a transfer plan depends on: communicator, bytes, shared, the two ends' warp lists (op_warps), and
  /// the pair as the model sees it.
  using PlanKey =
      std::tuple<int, std::uint64_t, bool, int, int, int, int, double, bool, bool, Picoseconds, double>;
  /// (communicator, op, bytes, root)
  using CollPlanKey = std::tuple<int, int, std::uint64_t, int>;
  static constexpr Picoseconds kNever = std::numeric_limits<Picoseconds>::min();

  // Set-up, before any event.
  void add_resources();
  void check_gpu(int g, const char* what) const;
  void set_up_communicators();
  models::CommInfo comm_info(const CommSpec& c);
  double weakest_node_network(const std::set<int>& nodes) const;
  /// Checks every launch and numbers the streams (in issue order) before any event; the kernels themselves
  /// are issued lazily (issue_next).
  void prepare_issue();
  /// Issues the next launch in program order (iteration by iteration); false once all are issued.
  bool issue_next();
  void check_kernel(const KernelSpec& k, int gpu, int rank);
  void issue_launch(const LaunchSpec& l, int iteration, std::size_t index);
  /// `rank`: the rank `gpu` is of k's communicator when known (kernels of every rank), else -1. `graph`:
  /// inside a captured CUDA graph; `join`: the previous graph iteration's kernels of its launch, to join on.
  void issue_kernel(const KernelSpec& k, int gpu, int iteration, Picoseconds issued, int rank = -1,
                    bool graph = false, const std::vector<int>* join = nullptr, int sid = -1);
  /// The sids, by rank, of the streams a kernel of every rank on communicator `comm` and `stream` runs on
  /// (numbered on first use, rank by rank).
  const std::vector<int>& rank_sids(int comm, int stream);
  void add_join(const std::vector<int>& previous, KernelInstance& ki);
  /// The GPUs, in rank order, of `k`, a kernel of every rank; checks that it is a collective on a known
  /// communicator.
  const std::vector<int>& every_rank_members(const KernelSpec& k) const;
  void check_ops(const KernelSpec& k) const;
  int collective_seq(const KernelSpec& k, int gpu, int rank);
  /// Whether kernel `k` has ended (a released kernel has).
  bool ended(int k) const { return kernels_.released(k) || kernels_[k].end >= 0; }
  void add_stream_waits(const KernelSpec& k, KernelInstance& ki);
  int stream_of(int gpu, int stream);
  void start_streams();

  // Kernels on streams.
  void try_start(int sid);
  void kernel_start(int k);
  void kernel_op_done(int k);
  void note_moving(int iteration, int gpu, Picoseconds from);

  // Send/recv transfers and copies.
  std::span<const int> route(int src, int dst, Transport transport);
  std::span<const int> route(const Impl::PairCache& pc, int src, int dst, Transport transport);
  void post(int k, int op_index);
  /// Fetches the posts that post() will look up for `op` of a kernel of `spec` on `gpu` (a hint).
  [[gnu::always_inline]] void prefetch_post(const KernelSpec& spec, int gpu, const OpSpec& op) const {
    if (op.kind != OpSpec::Kind::Send && op.kind != OpSpec::Kind::Recv) return;
    const bool is_send = op.kind == OpSpec::Kind::Send;
    const PostKey key{spec.comm, is_send ? gpu : op.peer, is_send ? op.peer : gpu};
    sends_.prefetch(key);
    recvs_.prefetch(key);
    impl_.prefetch_pair(key.src, key.dst);
  }
  void begin_transfer(Posted s, Posted r);
  std::uint32_t transfer_plan(int comm, std::uint64_t bytes, const models::PairInfo& info, bool shared,
                              int send_warps, int recv_warps);
  /// The warps NCCL's kernel gives operation `op` of kernel `ki` on each of its channel parts (the model's
  /// p2p_warps over the kernel's whole group): an index into warp_lists_, or -1 for the plan's default (a
  /// kernel of one operation, or a model without such a split).
  int op_warps(const KernelInstance& ki, int op);
  int comm_rank(int comm, int gpu);
  void start_self_copy(int k, int op_index);
  void start_parts(int t);
  void part_done(int t, int part);
  void finish_transfer(int t);
  void start_copy(int k, int op_index);

  // Collectives.
  void arrive(int k);
  void begin_collective(const std::vector<int>& group);
  void check_same_collective(const std::vector<int>& group) const;
  const models::CollectivePlan& collective_plan(int comm, const CollectiveSpec& c);
  void start_coll_flows(int c_id);
  void finish_coll(int c_id);

  // The event loop and what follows it.
  void run_events();
  void run_events_polled();
  void report_deadlock() const;
  void describe_wait(const KernelInstance& ki, std::ostream& waits) const;
  void sum_transfer_busy();

  Runtime& runtime_;
  Impl& impl_;
  const topo::Topology& topo_;
  const models::TransferModel& model_;
  const RunHooks& hooks_;
  const Program& program_;
  Trace* trace_;
  const RunOptions options_;
  EventQueue q_;
  FlowNetwork net_;  ///< after q_, which it schedules on
  const int n_gpus_;
  RunResult result_;

  // Communicators.
  std::vector<models::CommInfo> comms_;
  std::vector<std::vector<int>> comm_nodes_;  ///< machine of each rank
  std::vector<std::vector<int>> comm_nics_;   ///< own NIC of each rank across machines (empty: all have one)
  std::vector<std::vector<int>> sorted_members_;  ///< per communicator, its GPUs in order (membership tests)

  // Kernels, in issue order; host thread -> time its next launch starts.
  KernelStore kernels_;
  /// Lazy issue: the launches are issued in program order, each when a stream needs its next kernel
  /// (try_start), which gives the ids, times and order that issuing them all before the first event gave.
  /// Kernels that ended before the current time are released (not under CUDA graphs, whose joins read earlier
  /// ends).
  int issue_iteration_ = 0;
  std::size_t issue_launch_ = 0;
  int total_iterations_ = 0;
  bool release_ = true;
  std::vector<std::int64_t> stream_left_;                      ///< sid -> its kernels not issued yet
  std::map<std::pair<int, int>, std::vector<int>> rank_sids_;  ///< (comm, stream) -> sid of each rank
  std::vector<int> comm_gpus_;  ///< per communicator, its distinct GPUs (a launch's host time counts them)
  std::vector<int> deps_pool_;  ///< KernelInstance dependencies
  std::unordered_map<int, Picoseconds> thread_time_;  ///< read in no particular order (max of them)
  std::map<int, std::vector<int>> thread_gpus_;       ///< per host thread, the GPUs its last iteration ran on
  std::vector<Picoseconds> last_gpu_end_;             ///< per GPU, the end of its last iteration's kernels
  /// Per communicator, collectives issued by each GPU, by the GPU's position in sorted_members_.
  std::vector<std::vector<int>> coll_count_;
  std::vector<std::vector<int>>
      rank_pos_;  ///< per communicator, each rank's GPU's position in sorted_members_

  // Streams are numbered in order of first use (sid); per-stream state lives in vectors indexed by sid.
  std::unordered_map<std::uint64_t, int> sid_of_;  ///< (gpu, stream) -> sid
  std::vector<std::pair<int, int>> stream_key_;    ///< sid -> (gpu, stream)
  std::vector<KernelQueue> streams_;               ///< sid -> kernels not yet started, in order
  std::vector<int> last_enqueued_;                 ///< sid -> last kernel enqueued
  std::vector<std::vector<int>>
      graph_previous_;  ///< launch index -> its kernels of the previous graph iteration
  std::unordered_map<int, std::vector<int>> join_wake_;  ///< kernel -> streams whose next kernel joins on it
  std::vector<std::vector<int>> gpu_streams_;  ///< gpu -> its sids (while prepare_issue numbers them)
  /// The same once every stream is numbered, in one array: gpu g's sids are gpu_sids_[gpu_sid_at_[g] ..
  /// gpu_sid_at_[g + 1]), in gpu_streams_'s order. Read at every kernel's end; a vector per GPU was a cache
  /// miss there on large clusters.
  std::vector<int> gpu_sid_at_, gpu_sids_;
  std::vector<char> busy_;             ///< sid -> a kernel runs on it
  std::vector<Picoseconds> last_end_;  ///< sid -> end of its last non-marker kernel

  /// Per GPU, [from, to) spans of the measured iterations during which its data moved.
  /// Kept merged as they come: spans end at the current time, which never decreases, so a new span can only
  /// overlap the last few. And summed once no later span can reach them: every span starts at or after the
  /// start of a kernel running when it is noted (a 16,384-GPU push has 12.6 M spans).
  struct Moving {
    std::vector<std::pair<Picoseconds, Picoseconds>> spans;  ///< disjoint, in order; [head, end) open
    std::size_t head = 0;
    Picoseconds closed = 0;  ///< length of the spans before head
    bool used = false;
  };
  std::vector<Moving> moving_;
  std::deque<int> running_;  ///< kernels in start order (those that ended dropped from the front lazily)

  // Pending posts per (comm, src, dst): sends waiting for receives and receives waiting for sends. A key
  // lives only while posts wait on it (an all-to-all over 1,024 GPUs has a million keys, each used once).
  PostTable sends_, recvs_;
  // Plans depend on the pair only through what the model sees of it (PairInfo): pairs alike share a plan.
  std::map<PlanKey, std::uint32_t> plans_;          ///< -> plan_list_
  std::deque<models::TransferPlan> plan_list_;      ///< never moves: transfers keep indices
  std::unordered_map<int, std::uint32_t> records_;  ///< transfer slot -> its OpRecord in result_.ops
  // Warp splits, computed once per kernel spec of two or more operations and shared by equal ones.
  std::unordered_map<const KernelSpec*, int> spec_layout_;  ///< -> layouts_
  std::vector<std::vector<int>> layouts_;                   ///< per op: index into warp_lists_, or -1
  struct LayoutHash {
    std::size_t operator()(const std::vector<int>& v) const noexcept {
      std::uint64_t h = 1469598103934665603ULL;  // FNV-1a over the ints
      for (int x : v) h = (h ^ static_cast<std::uint32_t>(x)) * 1099511628211ULL;
      return static_cast<std::size_t>(h);
    }
  };
  std::unordered_map<std::vector<int>, int, LayoutHash> layout_ids_;  ///< ids in order of first use
  std::vector<models::GroupOp> group_scratch_;    ///< op_warps: the kernel's group as the model sees it
  std::vector<std::size_t> group_index_scratch_;  ///< and each entry's op
  std::vector<std::vector<models::PartSlot>> warp_lists_;  ///< warps, channel load, peers per channel part
  std::unordered_map<std::string, int> warp_list_ids_;     ///< a list's bytes -> its index
  /// A communicator's GPU -> rank, made on first use: a table from its lowest GPU where its GPUs lie close
  /// together, else sorted pairs.
  struct CommRanks {
    bool made = false;
    int lo = 0;
    std::vector<int> dense;                   ///< GPU lo + i -> rank, -1 none
    std::vector<std::pair<int, int>> sorted;  ///< (GPU, rank)
  };
  std::vector<CommRanks> comm_ranks_;  ///< per communicator
  std::string warp_key_;               ///< op_warps: a warp list's bytes
  std::vector<TransferState> transfers_;
  std::vector<int> free_transfers_;

  // Collectives: the k-th collective of every rank of a communicator meets; then the model's plan runs.
  std::map<std::pair<int, int>, std::vector<int>> rendezvous_;  ///< (comm, seq) -> kernels arrived
  std::map<CollPlanKey, models::CollectivePlan> coll_plans_;
  std::unordered_map<const models::CollectivePlan*, std::vector<std::span<const int>>> coll_routes_;
  std::vector<CollState> colls_;
  std::vector<int> free_colls_;
};

Runtime::Execution::Execution(Runtime& runtime, const Program& program, Trace* trace,
                              const RunOptions& options)
    : runtime_(runtime),
      impl_(*runtime.impl_),
      topo_(runtime.topo_),
      model_(runtime.model_),
      hooks_(runtime.hooks_),
      program_(program),
      trace_(trace),
      options_(options),
      net_(q_),
      n_gpus_(static_cast<int>(runtime.topo_.gpus.size())) {}

RunResult Runtime::Execution::run() {
  if (program_.iterations < 1 || program_.warmup < 0)
    throw UsageError("a run needs at least one measured iteration");
  add_resources();
  set_up_communicators();
  prepare_issue();
  start_streams();
  run_events();
  while (issue_next()) {
  }  // launches no stream waited for: launches without kernels, or kernels behind a deadlock
  result_.recomputations = net_.recomputations();
  result_.solved_flows = net_.solved_flows();
  result_.flow_classes = net_.coalesced_flows();
  report_deadlock();
  sum_transfer_busy();
  const Picoseconds first = program_.warmup > 0 ? result_.iteration_end[program_.warmup - 1] : 0;
  result_.per_iteration = (result_.iteration_end.back() - first) / program_.iterations;
  if (program_.mean_over_threads && !thread_gpus_.empty()) {
    // Each thread's clock stops when its own GPUs finish; nccl-tests averages the threads' times.
    Picoseconds sum = 0;
    for (const auto& [thread, gpus] : thread_gpus_) {
      Picoseconds end = first;
      for (int g : gpus) end = std::max(end, last_gpu_end_[static_cast<std::size_t>(g)]);
      sum += end - first;
    }
    result_.per_iteration = sum / static_cast<Picoseconds>(thread_gpus_.size()) / program_.iterations;
  }
  return std::move(result_);
}

// ---- Set-up ----

void Runtime::Execution::add_resources() {
  // The runtime's own events are tagged (no std::function per pending event: an all-to-all over 1,024 GPUs
  // has a million transfers waiting to start at once).
  q_.set_tag_handler([this](EventQueue::Tag tag) {
    const int x = static_cast<int>(tag & 0xffffffffU);
    switch (static_cast<Ev>(tag >> 32)) {
      case Ev::KernelStart:
        kernel_start(x);
        break;
      case Ev::KernelOpDone:
        kernel_op_done(x);
        break;
      case Ev::StartParts:
        start_parts(x);
        break;
      case Ev::FinishTransfer:
        finish_transfer(x);
        break;
      case Ev::StartCollFlows:
        start_coll_flows(x);
        break;
    }
  });
  // Flows of transfers and collectives complete through tags (8 bytes a flow, not a std::function).
  net_.set_tag_handler([this](FlowNetwork::Tag tag) {
    if (tag & kCollTag) {
      finish_coll(static_cast<int>(tag & ~kCollTag));
    } else {
      part_done(static_cast<int>(tag >> kPartBits), static_cast<int>(tag & (kPartLimit - 1)));
    }
  });
  // Names stay in the runtime (the trace reads them): a 16,384-GPU cluster has hundreds of thousands of
  // links, and the network of every run would copy them.
  net_.reserve_resources(impl_.resources.size());
  for (std::size_t i = 0; i < impl_.resources.size(); ++i) {
    const ResourceDef& r = impl_.resources[i];
    net_.add_resource(r.capacity, r.capacity > 0 ? std::string() : impl_.name(topo_, static_cast<int>(i)),
                      r.saturation);
  }
  // The last run's memory, or on a Runtime's first run the last Runtime's of this thread.
  if (!impl_.spare_net.class_lists.empty()) {
    net_.adopt_storage(std::move(impl_.spare_net));
  } else if (!t_spare_gone) {
    net_.adopt_storage(std::move(t_spare_net.storage));
    t_spare_net.storage = {};
  }
  impl_.spare_net = {};
  if (trace_) {
    for (const topo::GpuInfo& g : topo_.gpus) trace_->name_gpu(g.index, g.name);
    net_.set_load_observer([this](Picoseconds t, FlowNetwork::ResourceId r, double load) {
      trace_->counter(impl_.name(topo_, r), t, 100.0 * load / net_.capacity(r));
    });
  }
}

void Runtime::Execution::check_gpu(int g, const char* what) const {
  if (g < 0 || g >= n_gpus_) {
    throw UsageError(std::string(what) + " names GPU " + std::to_string(g) +
                     ", but the topology has GPUs 0-" + std::to_string(n_gpus_ - 1));
  }
}

void Runtime::Execution::set_up_communicators() {
  for (const CommSpec& c : program_.comms) {
    comms_.push_back(comm_info(c));
    std::vector<int> rank_node;
    for (int a : c.gpus) rank_node.push_back(topo_.gpus[a].node);
    // Across machines, which ranks have a NIC of their own (empty when every rank has one, or in one
    // machine).
    std::vector<int> rank_nic;
    if (comms_.back().nnodes > 1) {
      bool all = true;
      for (int a : c.gpus) {
        rank_nic.push_back(impl_.own_nic_of(topo_, a));
        all = all && rank_nic.back() >= 0;
      }
      if (all) rank_nic.clear();
    }
    comm_nodes_.push_back(std::move(rank_node));
    comm_nics_.push_back(std::move(rank_nic));
  }
}

/// What the model needs to know of one communicator.
models::CommInfo Runtime::Execution::comm_info(const CommSpec& c) {
  std::vector<models::PairInfo> pairs;
  std::set<int> nodes;
  for (int a : c.gpus) check_gpu(a, "a communicator");
  // The pairs NCCL takes its minima over: every pair inside each machine, and between machines one pair
  // per machine to the next (cross-machine pairs differ only in what the fabric gives them, which the
  // flows see anyway). Linear in the ranks, not quadratic: a 16,384-GPU communicator stays cheap.
  std::map<int, std::vector<int>> by_node;
  for (int a : c.gpus) by_node[topo_.gpus[a].node].push_back(a);
  // A machine alike inside to one already done (the same model machine: Runtime::Impl::model_of), with
  // members at the same local GPUs in the same order, has the same pairs in the same order: they are
  // copied, not routed (a 16,384-GPU cluster of one server type routes 56 pairs, not 114,688). Up to
  // kDoneKept machines done are remembered.
  struct Done {
    int model;
    std::vector<int> locals;  ///< the members' local GPU indices
    std::size_t begin, end;   ///< its pairs in `pairs`
  };
  constexpr std::size_t kDoneKept = 16;
  std::vector<Done> done;
  std::vector<int> locals;
  for (const auto& [node, members] : by_node) {
    nodes.insert(node);
    if (members.size() < 2) continue;  // no pair inside it
    locals.clear();
    for (int a : members) locals.push_back(topo_.gpus[static_cast<std::size_t>(a)].local_index);
    const int model = by_node.size() > 1 ? impl_.model_of(topo_, node) : -1;
    const Done* twin = nullptr;
    if (model >= 0) {
      for (const Done& d : done) {
        if (d.model == model && d.locals == locals) {
          twin = &d;
          break;
        }
      }
    }
    if (twin != nullptr) {
      for (std::size_t i = twin->begin; i < twin->end; ++i) {
        const models::PairInfo copy = pairs[i];  // (pushing may move the vector)
        pairs.push_back(copy);
      }
      continue;
    }
    const std::size_t begin = pairs.size();
    for (int a : members) {
      for (int b : members) {
        if (a != b) pairs.push_back(runtime_.pair(a, b));
      }
    }
    if (model >= 0 && done.size() < kDoneKept) done.push_back({model, locals, begin, pairs.size()});
  }
  if (by_node.size() > 1) {
    for (auto it = by_node.begin(); it != by_node.end(); ++it) {
      auto next = std::next(it) == by_node.end() ? by_node.begin() : std::next(it);
      pairs.push_back(runtime_.pair(it->second.front(), next->second.front()));
    }
  }
  models::CommInfo info =
      model_.comm_info(static_cast<int>(c.gpus.size()), static_cast<int>(nodes.size()), pairs);
  if (nodes.size() > 1) info.node_net_bandwidth = weakest_node_network(nodes);
  // The oldest GPU's compute capability picks NCCL's search speeds (0 when a GPU is not in the catalogue).
  // Looked up once per distinct model name (a 16,384-GPU communicator has one).
  const std::string* last_model = nullptr;
  for (int a : c.gpus) {
    const std::string& model = topo_.gpus[a].model;
    if (last_model != nullptr && model == *last_model) continue;
    last_model = &model;
    const models::GpuSpec* spec = models::HardwareCatalog::builtin().find_gpu(model);
    const int sm = spec != nullptr ? spec->sm : 0;
    info.sm = a == c.gpus.front() ? sm : std::min(info.sm, sm);
  }
  return info;
}

/// The smallest sum of NIC bandwidths (bytes/s) over `nodes`.
double Runtime::Execution::weakest_node_network(const std::set<int>& nodes) const {
  // Each node's sum in one pass over the NICs, added in the same order as a pass per node would (a pass per
  // node was 2,048 x 16,384 steps on a 16,384-GPU cluster).
  std::unordered_map<int, double> sums;
  sums.reserve(nodes.size());
  for (int node : nodes) sums.emplace(node, 0.0);
  for (const topo::NicInfo& nic : topo_.nics) {
    if (const auto it = sums.find(nic.node); it != sums.end()) it->second += nic.bandwidth;
  }
  double worst = 0;
  for (int node : nodes) {
    const double sum = sums[node];
    if (worst == 0 || sum < worst) worst = sum;
  }
  return worst;
}

/// Host threads issue every iteration's launches back to back; kernels become ready after the launch
/// latency. Before any event: every launch is checked (as issuing it would, in the same order, so a bad
/// program fails with the same error before it runs) and every stream numbered in order of first use, with
/// the number of kernels it will get. Every iteration issues the same launches: the first is walked.
void Runtime::Execution::prepare_issue() {
  const int total_iterations = program_.warmup + program_.iterations;
  total_iterations_ = total_iterations;
  release_ = !program_.cuda_graph;
  gpu_streams_.resize(topo_.gpus.size());
  for (const CommSpec& c : program_.comms) {
    sorted_members_.push_back(c.gpus);
    std::sort(sorted_members_.back().begin(), sorted_members_.back().end());
    const auto& sorted = sorted_members_.back();
    int distinct = 0;
    for (std::size_t i = 0; i < sorted.size(); ++i) distinct += i == 0 || sorted[i] != sorted[i - 1] ? 1 : 0;
    comm_gpus_.push_back(distinct);
    coll_count_.emplace_back(c.gpus.size(), 0);
    std::vector<int>& pos = rank_pos_.emplace_back();
    for (int g : c.gpus) {
      pos.push_back(static_cast<int>(std::lower_bound(sorted.begin(), sorted.end(), g) - sorted.begin()));
    }
  }
  result_.issue_end.assign(total_iterations, 0);
  std::vector<std::int64_t> per_iteration;  // sid -> kernels per iteration
  const auto count = [&](int sid) {
    if (per_iteration.size() <= static_cast<std::size_t>(sid)) per_iteration.resize(sid + 1, 0);
    ++per_iteration[static_cast<std::size_t>(sid)];
  };
  // A kernel of every rank: checked as every rank's instance would be (the kernel's own checks on the first
  // rank, each rank's GPU), its ranks' streams numbered once per (communicator, stream).
  const auto count_ranks = [&](const KernelSpec& k) {
    const std::vector<int>& members = program_.comms[k.comm].gpus;
    for (std::size_t r = 0; r < members.size(); ++r) {
      if (r == 0) {
        check_kernel(k, members[r], 0);
      } else {
        check_gpu(members[r], "a kernel");
      }
    }
    for (int sid : rank_sids(k.comm, k.stream)) count(sid);
  };
  for (const LaunchSpec& l : program_.launches) {
    if (l.thread_per_rank) {
      if (l.kernels.size() != 1 || !l.kernels.front().every_rank)
        throw UsageError("a launch per rank needs exactly one kernel of every rank");
      every_rank_members(l.kernels.front());
      count_ranks(l.kernels.front());
      continue;
    }
    for (const KernelSpec& k : l.kernels) {
      if (k.every_rank) every_rank_members(k);
    }
    for (const KernelSpec& k : l.kernels) {
      if (k.every_rank) {
        count_ranks(k);
      } else {
        check_kernel(k, k.gpu, -1);
        count(stream_of(k.gpu, k.stream));
      }
    }
  }
  per_iteration.resize(streams_.size(), 0);
  stream_left_.resize(streams_.size());
  for (std::size_t sid = 0; sid < streams_.size(); ++sid)
    stream_left_[sid] = per_iteration[sid] * std::max(0, total_iterations);
  if (program_.launches.empty()) issue_iteration_ = total_iterations;  // nothing to issue
  result_.iteration_end.assign(total_iterations, 0);
  last_gpu_end_.assign(topo_.gpus.size(), 0);
  busy_.assign(streams_.size(), 0);
  last_end_.assign(streams_.size(), kNever);
  gpu_sid_at_.assign(gpu_streams_.size() + 1, 0);
  gpu_sids_.clear();
  gpu_sids_.reserve(streams_.size());
  for (std::size_t g = 0; g < gpu_streams_.size(); ++g) {
    gpu_sids_.insert(gpu_sids_.end(), gpu_streams_[g].begin(), gpu_streams_[g].end());
    gpu_sid_at_[g + 1] = static_cast<int>(gpu_sids_.size());
  }
}

/// Charges one launch's host time to its thread, then issues its kernels. Inside a CUDA graph (the measured
/// iterations of a `cuda_graph` program) the host enqueues nothing, and a launch that drives several GPUs
/// joins their streams: each of its kernels also waits for the previous iteration's kernels of the launch.
void Runtime::Execution::issue_launch(const LaunchSpec& l, int iteration, std::size_t index) {
  const bool graph = program_.cuda_graph && iteration >= program_.warmup;
  // The measured run's last iteration: where each host thread's GPUs are noted (mean_over_threads).
  const bool last = program_.mean_over_threads && iteration + 1 == program_.warmup + program_.iterations;
  if (l.thread_per_rank) {
    if (l.kernels.size() != 1 || !l.kernels.front().every_rank)
      throw UsageError("a launch per rank needs exactly one kernel of every rank");
    const KernelSpec& k = l.kernels.front();
    const std::vector<int>& members = every_rank_members(k);
    // Each rank's launch: one GPU, no send/recv, one collective (one GPU per thread: no graph join).
    const Picoseconds host =
        graph ? 0 : model_.host_launch_time(1, 0, 1) + l.framework_calls * model_.framework_call_time();
    const std::vector<int>& sids = rank_sids(k.comm, k.stream);
    for (std::size_t r = 0; r < members.size(); ++r) {
      Picoseconds& t = thread_time_[l.thread + static_cast<int>(r)];
      t += host;
      if (last) thread_gpus_[l.thread + static_cast<int>(r)].push_back(members[r]);
      issue_kernel(k, members[r], iteration, t, static_cast<int>(r), graph, nullptr, sids[r]);
    }
    return;
  }
  std::vector<int> gpus;
  int ops = 0, colls = 0;
  bool comm_kernel = false, compute_kernel = false;
  int distinct = -1;  // the GPUs the launch drives, when known without listing them
  if (l.kernels.size() == 1 && l.kernels.front().every_rank) {
    const KernelSpec& k = l.kernels.front();
    colls = static_cast<int>(every_rank_members(k).size());
    comm_kernel = true;
    distinct = comm_gpus_[static_cast<std::size_t>(k.comm)];
  }
  for (const KernelSpec& k : distinct >= 0 ? std::span<const KernelSpec>{} : std::span{l.kernels}) {
    if (k.every_rank) {
      const std::vector<int>& members = every_rank_members(k);
      gpus.insert(gpus.end(), members.begin(), members.end());
      comm_kernel = true;
      colls += static_cast<int>(members.size());
      continue;
    }
    if (!k.ops.empty() || k.collective) {
      gpus.push_back(k.gpu);
      comm_kernel = true;
    }
    if (k.compute > 0) compute_kernel = true;
    ops += static_cast<int>(k.ops.size());
    // A copy to self is two calls, ncclSend and ncclRecv to the calling rank.
    for (const OpSpec& op : k.ops) ops += op.kind == OpSpec::Kind::SelfCopy ? 1 : 0;
    colls += k.collective ? 1 : 0;
  }
  if (distinct < 0) {
    std::sort(gpus.begin(), gpus.end());
    distinct = static_cast<int>(std::unique(gpus.begin(), gpus.end()) - gpus.begin());
  }
  Picoseconds& t = thread_time_[l.thread];
  if (!graph) {
    if (comm_kernel) t += model_.host_launch_time(distinct, ops, colls);
    if (compute_kernel) t += model_.compute_launch_time();
    t += l.framework_calls * model_.framework_call_time();
  }
  // Joined (a graph launch over several GPUs): remember this iteration's kernels of the launch for the next
  // iteration's join.
  const bool joined = graph && distinct >= 2;
  std::vector<int>* previous = nullptr;
  std::vector<int> issued;
  if (joined) {
    if (graph_previous_.size() <= index) graph_previous_.resize(index + 1);
    previous = &graph_previous_[index];
  }
  const auto issue = [&](const KernelSpec& k, int gpu, int rank, int sid) {
    issue_kernel(k, gpu, iteration, t, rank, graph, previous, sid);
    if (last) thread_gpus_[l.thread].push_back(gpu);
    if (joined) issued.push_back(kernels_.size() - 1);
  };
  for (const KernelSpec& k : l.kernels) {
    if (k.every_rank) {
      const std::vector<int>& members = program_.comms[k.comm].gpus;
      const std::vector<int>& sids = rank_sids(k.comm, k.stream);
      for (std::size_t r = 0; r < members.size(); ++r) issue(k, members[r], static_cast<int>(r), sids[r]);
    } else {
      issue(k, k.gpu, -1, -1);
    }
  }
  if (joined) *previous = std::move(issued);
}

const std::vector<int>& Runtime::Execution::every_rank_members(const KernelSpec& k) const {
  if (!k.collective || !k.ops.empty() || k.compute > 0 || k.comm < 0 ||
      static_cast<std::size_t>(k.comm) >= comms_.size())
    throw UsageError("a kernel of every rank must be a collective on a known communicator");
  return program_.comms[k.comm].gpus;
}

bool Runtime::Execution::issue_next() {
  if (issue_iteration_ >= total_iterations_) return false;
  issue_launch(program_.launches[issue_launch_], issue_iteration_, issue_launch_);
  if (++issue_launch_ == program_.launches.size()) {
    Picoseconds& end = result_.issue_end[static_cast<std::size_t>(issue_iteration_)];
    for (const auto& [thread, t] : thread_time_) end = std::max(end, t);
    issue_launch_ = 0;
    ++issue_iteration_;
  }
  return true;
}

/// What issuing an instance of `k` on `gpu` checks (prepare_issue, before any event).
void Runtime::Execution::check_kernel(const KernelSpec& k, int gpu, int rank) {
  check_gpu(gpu, "a kernel");
  if (k.comm < 0 || static_cast<std::size_t>(k.comm) >= comms_.size())
    throw UsageError("kernel on an unknown communicator");
  if (k.ops.size() >= (std::size_t{1} << 26)) throw UsageError("a kernel has more than 2^26 operations");
  check_ops(k);
  if (!k.collective) return;
  if (rank < 0) {
    const auto& sorted = sorted_members_[k.comm];
    if (!std::binary_search(sorted.begin(), sorted.end(), gpu)) {
      throw UsageError("GPU " + std::to_string(gpu) + " issues a collective on a communicator it is not in");
    }
  }
  if (k.collective->root < 0 ||
      static_cast<std::size_t>(k.collective->root) >= program_.comms[k.comm].gpus.size())
    throw UsageError("collective root is not a rank of the communicator");
}

const std::vector<int>& Runtime::Execution::rank_sids(int comm, int stream) {
  auto [it, fresh] = rank_sids_.try_emplace({comm, stream});
  if (fresh) {
    for (int g : program_.comms[static_cast<std::size_t>(comm)].gpus)
      it->second.push_back(stream_of(g, stream));
  }
  return it->second;
}

/// Queues an instance of `k` (checked by prepare_issue) on its stream; `issued` is when its host thread
/// issued it.
void Runtime::Execution::issue_kernel(const KernelSpec& k, int gpu, int iteration, Picoseconds issued,
                                      int rank, bool graph, const std::vector<int>* join, int sid) {
  KernelInstance ki;
  ki.spec = &k;
  ki.iteration = iteration;
  ki.gpu = gpu;
  ki.marker = is_marker(k);
  ki.start = ki.marker ? issued : issued + model_.kernel_launch_latency();  // ready; the start once started
  ki.pending = static_cast<int>(k.ops.size() & ((std::size_t{1} << 26) - 1));  // checked by check_kernel
  ki.shared = sends_and_receives(k);
  if (k.collective) ki.coll_seq = collective_seq(k, gpu, rank);
  add_stream_waits(k, ki);
  ki.graph = graph ? 1 : 0;
  ki.sid = sid >= 0 ? sid : stream_of(gpu, k.stream);
  if (join) add_join(*join, ki);
  const Picoseconds now = q_.now();
  const int id = kernels_.push(ki, [&](const KernelInstance& old) {
    return release_ && old.end >= 0 && old.end < now;  // nothing of the current instant refers to it
  });
  streams_[ki.sid].push_back(id);
  last_enqueued_[ki.sid] = id;
  --stream_left_[ki.sid];
}

/// Checks the peers of `k`'s operations.
void Runtime::Execution::check_ops(const KernelSpec& k) const {
  for (const OpSpec& op : k.ops) {
    check_gpu(op.peer, "an operation");
    if (op.kind == OpSpec::Kind::SelfCopy) {
      if (op.peer != k.gpu) {
        throw UsageError("a copy to self on GPU " + std::to_string(k.gpu) + " names GPU " +
                         std::to_string(op.peer));
      }
      continue;
    }
    if (op.peer == k.gpu) throw UsageError("GPU " + std::to_string(k.gpu) + " sends to itself");
  }
}

/// Checks collective kernel `k`; returns its position among its GPU's collectives on its communicator.
int Runtime::Execution::collective_seq(const KernelSpec& k, int gpu, int rank) {
  const auto& members = program_.comms[k.comm].gpus;
  std::size_t pos;
  if (rank >= 0) {
    pos = static_cast<std::size_t>(rank_pos_[k.comm][static_cast<std::size_t>(rank)]);
  } else {
    const auto& sorted = sorted_members_[k.comm];
    const auto at = std::lower_bound(sorted.begin(), sorted.end(), gpu);
    if (at == sorted.end() || *at != gpu) {
      throw UsageError("GPU " + std::to_string(gpu) + " issues a collective on a communicator it is not in");
    }
    pos = static_cast<std::size_t>(at - sorted.begin());
  }
  if (k.collective->root < 0 || static_cast<std::size_t>(k.collective->root) >= members.size())
    throw UsageError("collective root is not a rank of the communicator");
  return coll_count_[k.comm][pos]++;
}

/// `ki` waits for the last kernel issued so far on each stream `k` waits on (streams not used yet: none).
void Runtime::Execution::add_stream_waits(const KernelSpec& k, KernelInstance& ki) {
  for (int ws : k.wait_streams) {
    auto le = sid_of_.find(pair_key(ki.gpu, ws));
    if (le != sid_of_.end()) {
      if (ki.deps < 0) {
        ki.deps = static_cast<int>(deps_pool_.size());
        deps_pool_.push_back(0);
      }
      deps_pool_.push_back(last_enqueued_[le->second]);
      ++deps_pool_[static_cast<std::size_t>(ki.deps)];
    }
  }
}

/// `ki` waits for the kernels of `previous` on other streams (a graph's cross-GPU join).
void Runtime::Execution::add_join(const std::vector<int>& previous, KernelInstance& ki) {
  for (int d : previous) {
    if (kernels_[d].sid == ki.sid) continue;  // the stream orders these anyway
    if (ki.deps < 0) {
      ki.deps = static_cast<int>(deps_pool_.size());
      deps_pool_.push_back(0);
    }
    // The pool's last block is ki's (add_stream_waits wrote it just before): the join extends it.
    deps_pool_.push_back(d);
    ++deps_pool_[static_cast<std::size_t>(ki.deps)];
    ki.join = 1;
    join_wake_[d].push_back(ki.sid);
  }
}

/// The sid of (gpu, stream), numbering the stream on its first use.
int Runtime::Execution::stream_of(int gpu, int stream) {
  for (int sid : gpu_streams_[gpu]) {  // a GPU has a few streams: cheaper than the hash
    if (stream_key_[sid].second == stream) return sid;
  }
  auto [sit, fresh] = sid_of_.try_emplace(pair_key(gpu, stream), static_cast<int>(streams_.size()));
  if (fresh) {
    gpu_streams_[gpu].push_back(sit->second);
    stream_key_.emplace_back(gpu, stream);
    streams_.emplace_back();
    last_enqueued_.push_back(-1);
  }
  return sit->second;
}

void Runtime::Execution::start_streams() {
  // In (gpu, stream) order, as before streams were numbered: equal-time events keep their order.
  std::vector<int> by_key(streams_.size());
  for (std::size_t i = 0; i < by_key.size(); ++i) by_key[i] = static_cast<int>(i);
  std::sort(by_key.begin(), by_key.end(), [&](int a, int b) { return stream_key_[a] < stream_key_[b]; });
  for (int sid : by_key) try_start(sid);
}

// ---- Kernels on streams ----

/// Schedules the next kernel of stream `sid` if the stream is free and the kernel's dependencies have ended;
/// it starts at its ready time, but not before the stream's last kernel ended plus the model's kernel gap.
void Runtime::Execution::try_start(int sid) {
  if (busy_[sid]) return;
  auto& queue = streams_[sid];
  while (queue.empty() && stream_left_[sid] > 0 && issue_next()) {
  }  // its next kernel, issued lazily
  if (queue.empty()) return;
  const int k = queue.front();
  if (const int at = kernels_[k].deps; at >= 0) {
    for (int i = 1; i <= deps_pool_[at]; ++i) {
      if (!ended(deps_pool_[at + i])) return;  // woken again when that kernel ends
    }
  }
  queue.pop_front();
  busy_[sid] = 1;
  const KernelInstance& ki = kernels_[k];
  Picoseconds when = ki.start;  // not started: the ready time
  if (last_end_[sid] != kNever && !ki.marker)
    when = std::max(when, last_end_[sid] + (ki.graph ? model_.graph_kernel_gap() : model_.kernel_gap()));
  if (ki.join) {
    for (int i = 1; i <= deps_pool_[ki.deps]; ++i)
      when = std::max(when, kernels_[deps_pool_[ki.deps + i]].end + model_.graph_join_time());
  }
  q_.at_tagged(std::max(when, q_.now()), event_tag(Ev::KernelStart, k));
}

/// Kernel `k` starts on its stream (scheduled by try_start; the event carries only the kernel's index).
void Runtime::Execution::kernel_start(int k) {
  KernelInstance& ki = kernels_[k];
  ki.start = q_.now();
  ki.started = 1;
  if (program_.transfer_busy) running_.push_back(k);  // read by note_moving only
  // `ki` is not used past a call that may end a kernel: ending one issues others (try_start), which may
  // move the store.
  const KernelSpec& spec = *ki.spec;
  if (spec.collective) {
    ki.pending = 1;
    arrive(k);
    return;
  }
  if (spec.compute > 0) {
    ki.pending = 1;
    q_.after_tagged(spec.compute, event_tag(Ev::KernelOpDone, k));
    return;
  }
  if (spec.ops.empty()) {
    ki.pending = 1;
    kernel_op_done(k);
    return;
  }
  const int gpu = ki.gpu;
  const bool fetch = sends_.fetches() || recvs_.fetches() || impl_.fetches_pairs();
  for (std::size_t i = 0; i < spec.ops.size(); ++i) {
    // The posts and the pair entry of the operation 8 on are fetched ahead: in an all-to-all each post looks
    // up a random key of a table of half a million and the pair's entry in a table of a million; one
    // kernel's lookups can overlap.
    if (fetch && i + 8 < spec.ops.size()) prefetch_post(spec, gpu, spec.ops[i + 8]);
    if (spec.ops[i].kind == OpSpec::Kind::Copy) {
      start_copy(k, static_cast<int>(i));
    } else if (spec.ops[i].kind == OpSpec::Kind::SelfCopy) {
      start_self_copy(k, static_cast<int>(i));
    } else {
      post(k, static_cast<int>(i));
    }
  }
}

/// One operation of kernel `k` has finished; after its last one the kernel ends: its stream frees, the
/// result and the trace record it, and its GPU's streams may start their next kernels.
void Runtime::Execution::kernel_op_done(int k) {
  KernelInstance& ki = kernels_[k];
  if (--ki.pending > 0) return;
  ki.end = q_.now();
  busy_[ki.sid] = 0;
  if (!ki.marker) last_end_[ki.sid] = ki.end;
  result_.iteration_end[ki.iteration] = std::max(result_.iteration_end[ki.iteration], ki.end);
  if (program_.mean_over_threads && ki.iteration + 1 == static_cast<int>(result_.iteration_end.size())) {
    Picoseconds& g = last_gpu_end_[static_cast<std::size_t>(ki.gpu)];
    g = std::max(g, ki.end);
  }
  if (ki.spec->compute > 0 && ki.iteration == program_.warmup)
    result_.compute.push_back({ki.gpu, ki.spec->name, ki.start, ki.end});
  if (!ki.marker && ki.spec->stream == 0 && ki.iteration == program_.warmup - 1) {
    Picoseconds& at = result_.iteration_start[ki.gpu];
    at = std::max(at, ki.end);
  }
  if (ki.spec->compute > 0 && ki.iteration >= program_.warmup)
    result_.busy[ki.gpu].compute += ki.end - ki.start;
  if (trace_ && !ki.marker) {
    trace_->span(ki.gpu, "stream " + std::to_string(ki.spec->stream), ki.spec->name, ki.start, ki.end,
                 {{"iteration", static_cast<int>(ki.iteration)}});
  }
  const auto g = static_cast<std::size_t>(ki.gpu);
  for (int i = gpu_sid_at_[g]; i < gpu_sid_at_[g + 1]; ++i) try_start(gpu_sids_[static_cast<std::size_t>(i)]);
  if (!join_wake_.empty()) {
    const auto waiting = join_wake_.find(k);
    if (waiting != join_wake_.end()) {
      const std::vector<int> sids = std::move(waiting->second);
      join_wake_.erase(waiting);
      for (int sid : sids) try_start(sid);
    }
  }
}

/// Data of `gpu` moved from `from` until now (counted in the measured iterations only).
void Runtime::Execution::note_moving(int iteration, int gpu, Picoseconds from) {
  if (iteration < program_.warmup || !program_.transfer_busy) return;
  if (moving_.empty()) moving_.resize(static_cast<std::size_t>(n_gpus_));
  Moving& m = moving_[static_cast<std::size_t>(gpu)];
  auto& spans = m.spans;
  m.used = true;
  // Disjoint spans in order; [from, now] absorbs those that end at or after `from` (all end by now).
  Picoseconds lo = from;
  while (spans.size() > m.head && spans.back().second >= from) {
    lo = std::min(lo, spans.back().first);
    spans.pop_back();
  }
  spans.push_back({lo, q_.now()});
  // Spans that end before the earliest start of a running kernel (or now) are final: sum and drop them.
  while (!running_.empty() && ended(running_.front())) running_.pop_front();
  const Picoseconds floor = running_.empty() ? q_.now() : kernels_[running_.front()].start;
  while (m.head < spans.size() && spans[m.head].second < floor) {
    m.closed += spans[m.head].second - spans[m.head].first;
    ++m.head;
  }
  if (m.head >= 32 && 2 * m.head >= spans.size()) {
    spans.erase(spans.begin(), spans.begin() + static_cast<std::ptrdiff_t>(m.head));
    m.head = 0;
  }
}

// ---- Send/recv transfers and copies ----

/// The links a transfer of `transport` from src to dst crosses.
std::span<const int> Runtime::Execution::route(int src, int dst, Transport transport) {
  return route(impl_.entry(topo_, src, dst), src, dst, transport);
}

std::span<const int> Runtime::Execution::route(const Impl::PairCache& pc, int src, int dst,
                                               Transport transport) {
  const models::PairInfo& info = impl_.info(pc);
  if (transport == Transport::P2p || (transport == Transport::Net && !info.same_node)) return impl_.route(pc);
  Impl::OtherRoutes& o = impl_.other[Impl::key(src, dst)];
  if (transport == Transport::Shm) {
    if (!o.shm_done) {
      // Through host memory: up to the sender's CPU, then (across the socket link if need be) down to dst.
      topo::Vertex cpu = 0;
      o.shm = runtime_.via_nearest(src, dst, topo::VertexKind::Cpu, "no CPU is reachable", &cpu);
      if (impl_.shm_out[src] >= 0) o.shm.push_back(impl_.shm_out[src]);
      if (impl_.shm_in[dst] >= 0) o.shm.push_back(impl_.shm_in[dst]);
      if (const auto m = impl_.shm_host.find(cpu); m != impl_.shm_host.end()) o.shm.push_back(m->second);
      o.shm_done = true;
    }
    return o.shm;
  }
  if (transport == Transport::Net && info.same_node) {
    if (!o.net_done) {
      o.net =
          runtime_.via_nearest(src, dst, topo::VertexKind::Nic,
                               "P2P and SHM are disabled and the machine has no NIC for the NET transport");
      o.net_done = true;
    }
    return o.net;
  }
  return impl_.route(pc);
}

/// Posts send or receive `op_index` of kernel `k`: it begins a transfer with the oldest matching post of the
/// other side, or waits for one.
void Runtime::Execution::post(int k, int op_index) {
  const KernelInstance& ki = kernels_[k];
  const OpSpec& op = ki.spec->ops[op_index];
  const bool is_send = op.kind == OpSpec::Kind::Send;
  const int src = is_send ? ki.gpu : op.peer;
  const int dst = is_send ? op.peer : ki.gpu;
  const PostKey key{ki.spec->comm, src, dst};
  Posted other;
  if ((is_send ? recvs_ : sends_).pop(key, other)) {
    if (is_send) {
      begin_transfer({k, op_index}, other);
    } else {
      begin_transfer(other, {k, op_index});
    }
  } else {
    (is_send ? sends_ : recvs_).push(key, {k, op_index});
  }
}

/// Send `s` has met receive `r`: after the plan's base latency its channel parts start moving.
void Runtime::Execution::begin_transfer(Posted s, Posted r) {
  const KernelInstance& sk = kernels_[s.kernel];
  const OpSpec& op = sk.spec->ops[s.op];
  const int src = sk.gpu, dst = op.peer;
  const std::uint64_t bytes = op.bytes;
  if (kernels_[r.kernel].spec->ops[r.op].bytes != bytes) {
    throw SimulationError("GPU " + std::to_string(src) + " sends " + std::to_string(bytes) +
                          " bytes to GPU " + std::to_string(dst) + ", which expects " +
                          std::to_string(kernels_[r.kernel].spec->ops[r.op].bytes));
  }
  const Impl::PairCache pc = impl_.entry(topo_, src, dst);
  const models::PairInfo& info = impl_.info(pc);
  const bool shared = sk.shared || kernels_[r.kernel].shared;
  const int send_warps = op_warps(sk, s.op);
  const int recv_warps = op_warps(kernels_[r.kernel], r.op);
  TransferState ts;
  ts.plan = transfer_plan(sk.spec->comm, bytes, info, shared, send_warps, recv_warps);
  const models::TransferPlan& plan = plan_list_[ts.plan];
  ts.s = s;
  ts.r = r;
  ts.start = q_.now();
  ts.remaining = static_cast<int>(plan.parts.size());
  int t;
  if (!free_transfers_.empty()) {
    t = free_transfers_.back();
    free_transfers_.pop_back();
    transfers_[t] = ts;
  } else {
    t = static_cast<int>(transfers_.size());
    transfers_.push_back(ts);
  }
  if (kernels_[s.kernel].iteration == program_.warmup && result_.ops.size() < options_.op_records) {
    if (result_.ops.size() >= kNoRecord) throw Error("more than 2^32 - 1 transfers in one iteration");
    records_[t] = static_cast<std::uint32_t>(result_.ops.size());
    result_.ops.push_back({src, dst, bytes, plan.transport, plan.protocol, plan.channels, ts.start, 0});
  }
  q_.after_tagged(plan.base_latency, event_tag(Ev::StartParts, t));
}

/// The model's plan for a transfer, shared by every pair the model sees alike.
std::uint32_t Runtime::Execution::transfer_plan(int comm, std::uint64_t bytes, const models::PairInfo& info,
                                                bool shared, int send_warps, int recv_warps) {
  auto pk = std::make_tuple(comm, bytes, shared, send_warps, recv_warps, static_cast<int>(info.path),
                            info.nvlinks, info.nvlink_bandwidth, info.same_node, info.tcp, info.path_latency,
                            info.route_bandwidth);
  auto pit = plans_.find(pk);
  if (pit != plans_.end()) return pit->second;
  const auto add = [&](models::TransferPlan plan) {
    const auto id = static_cast<std::uint32_t>(plan_list_.size());
    plan_list_.push_back(std::move(plan));
    plans_.emplace(pk, id);
    return id;
  };
  if (send_warps < 0 && recv_warps < 0) return add(model_.plan(bytes, info, comms_[comm], shared));
  // Each end's warps per part; an end without a list gives what its kernel's default would.
  const models::PartWarps fallback = shared ? models::kSharedWarps : models::kSoloWarps;
  const std::vector<models::PartSlot> none;
  const auto& sl = send_warps >= 0 ? warp_lists_[static_cast<std::size_t>(send_warps)] : none;
  const auto& rl = recv_warps >= 0 ? warp_lists_[static_cast<std::size_t>(recv_warps)] : none;
  const std::size_t parts = std::max<std::size_t>({sl.size(), rl.size(), 1});
  std::vector<models::PartWarps> warps(parts, fallback);
  for (std::size_t p = 0; p < parts; ++p) {
    if (!sl.empty()) {
      const models::PartSlot& s = sl[std::min(p, sl.size() - 1)];
      warps[p].send = s.warps;
      warps[p].send_load = s.load;
      warps[p].send_peers = s.peers;
      warps[p].send_channels = s.channels;
    }
    if (!rl.empty()) {
      const models::PartSlot& r = rl[std::min(p, rl.size() - 1)];
      warps[p].recv = r.warps;
      warps[p].recv_load = r.load;
      warps[p].recv_peers = r.peers;
      warps[p].recv_channels = r.channels;
    }
  }
  return add(model_.plan(bytes, info, comms_[comm], warps));
}

int Runtime::Execution::comm_rank(int comm, int gpu) {
  if (comm_ranks_.size() < program_.comms.size()) comm_ranks_.resize(program_.comms.size());
  CommRanks& ranks = comm_ranks_[static_cast<std::size_t>(comm)];
  if (!ranks.made) {
    // A GPU listed twice keeps its first rank.
    const auto& gpus = program_.comms[static_cast<std::size_t>(comm)].gpus;
    ranks.made = true;
    if (gpus.empty()) return -1;
    const auto [lo, hi] = std::minmax_element(gpus.begin(), gpus.end());
    const auto span = static_cast<std::size_t>(static_cast<std::int64_t>(*hi) - *lo) + 1;
    if (span <= 4 * gpus.size() + 64) {  // GPUs close together (most communicators): a table
      ranks.lo = *lo;
      ranks.dense.assign(span, -1);
      for (std::size_t r = gpus.size(); r-- > 0;) {
        ranks.dense[static_cast<std::size_t>(gpus[r] - *lo)] = static_cast<int>(r);
      }
    } else {  // scattered: sorted (GPU, rank) pairs, the first rank of a GPU first
      ranks.sorted.reserve(gpus.size());
      for (std::size_t r = 0; r < gpus.size(); ++r) ranks.sorted.emplace_back(gpus[r], static_cast<int>(r));
      std::sort(ranks.sorted.begin(), ranks.sorted.end());
    }
  }
  if (!ranks.dense.empty()) {
    const auto at = static_cast<std::size_t>(static_cast<std::int64_t>(gpu) - ranks.lo);
    return at < ranks.dense.size() ? ranks.dense[at] : -1;
  }
  const auto it = std::lower_bound(ranks.sorted.begin(), ranks.sorted.end(), std::make_pair(gpu, -1));
  return it != ranks.sorted.end() && it->first == gpu ? it->second : -1;
}

int Runtime::Execution::op_warps(const KernelInstance& ki, int op) {
  const KernelSpec& k = *ki.spec;
  if (k.ops.size() < 2) return -1;
  auto it = spec_layout_.find(&k);
  if (it == spec_layout_.end()) {
    std::vector<int> layout(k.ops.size(), -1);
    const int me = comm_rank(k.comm, ki.gpu);
    std::vector<models::GroupOp>& group = group_scratch_;
    std::vector<std::size_t>& index = group_index_scratch_;  // group entry -> op
    group.clear();
    index.clear();
    bool members = me >= 0;
    for (std::size_t i = 0; i < k.ops.size() && members; ++i) {
      const OpSpec& o = k.ops[i];
      if (o.kind == OpSpec::Kind::Copy) continue;
      models::GroupOp g;
      g.dir = o.kind == OpSpec::Kind::Send   ? models::GroupOp::Dir::Send
              : o.kind == OpSpec::Kind::Recv ? models::GroupOp::Dir::Recv
                                             : models::GroupOp::Dir::Self;
      g.peer = g.dir == models::GroupOp::Dir::Self ? me : comm_rank(k.comm, o.peer);
      g.bytes = o.bytes;
      members = g.peer >= 0;
      group.push_back(g);
      index.push_back(i);
    }
    if (members) {
      const auto lists = model_.p2p_warps(comms_[static_cast<std::size_t>(k.comm)], me,
                                          comm_nodes_[static_cast<std::size_t>(k.comm)], group);
      for (std::size_t g = 0; g < lists.size() && g < index.size(); ++g) {
        const std::span<const models::PartSlot> list = lists[g];
        if (list.empty()) continue;
        // The list's bytes: warps and load of each part, then the group's peers and remote channels (the same
        // for every part of an operation, so once).
        std::string& key = warp_key_;
        key.resize(2 * list.size() + 2);
        std::size_t at = 0;
        for (const models::PartSlot& s : list) {
          key[at++] = static_cast<char>(s.warps);
          key[at++] = static_cast<char>(s.load);
        }
        key[at++] = static_cast<char>(list.front().peers);
        key[at] = static_cast<char>(list.front().channels);
        assert(std::all_of(list.begin(), list.end(), [&](const models::PartSlot& s) {
          return s.peers == list.front().peers && s.channels == list.front().channels;
        }));
        auto w = warp_list_ids_.find(key);  // most lists recur: look before building a node
        if (w == warp_list_ids_.end()) {
          w = warp_list_ids_.emplace(key, static_cast<int>(warp_lists_.size())).first;
          warp_lists_.emplace_back(list.begin(), list.end());
        }
        layout[index[g]] = w->second;
      }
    }
    auto l = layout_ids_.find(layout);
    if (l == layout_ids_.end()) {
      l = layout_ids_.emplace(layout, static_cast<int>(layouts_.size())).first;
      layouts_.push_back(std::move(layout));
    }
    it = spec_layout_.emplace(&k, l->second).first;
  }
  return layouts_[static_cast<std::size_t>(it->second)][static_cast<std::size_t>(op)];
}

/// NCCL's copy to self: the kernel's warps copy inside the GPU; the operation ends after the model's time.
void Runtime::Execution::start_self_copy(int k, int op_index) {
  const KernelInstance& ki = kernels_[k];
  const OpSpec& op = ki.spec->ops[static_cast<std::size_t>(op_index)];
  const int w = op_warps(ki, op_index);
  std::vector<std::uint8_t> warps;
  if (w >= 0) {
    for (const models::PartSlot& s : warp_lists_[static_cast<std::size_t>(w)]) warps.push_back(s.warps);
  } else {
    warps.push_back(models::kSoloWarps.send);
  }
  const Picoseconds t =
      model_.self_copy_time(op.bytes, comms_[static_cast<std::size_t>(ki.spec->comm)], warps);
  if (trace_) {
    trace_->span(ki.gpu, "copy to self", "copy " + format_size(op.bytes), q_.now(), q_.now() + t);
  }
  q_.after_tagged(t, event_tag(Ev::KernelOpDone, k));
}

/// Transfer `t` starts one flow per channel part on its path.
void Runtime::Execution::start_parts(int t) {
  const TransferState& ts = transfers_[t];
  const models::TransferPlan& plan = plan_list_[ts.plan];
  const int src = kernels_[ts.s.kernel].gpu, dst = kernels_[ts.r.kernel].gpu;
  const std::span<const int> path = route(src, dst, plan.transport);
  for (std::size_t i = 0; i < plan.parts.size(); ++i) {
    ++result_.flows;
    result_.chunk_steps += static_cast<std::uint64_t>(plan.parts[i].steps);
    const int part = static_cast<int>(i);
    const double rate = plan.parts[i].rate > 0 ? plan.parts[i].rate : plan.channel_rate;
    if (i < kPartLimit) {
      net_.start_tagged(path, plan.parts[i].wire_bytes, rate, static_cast<std::uint64_t>(t) << kPartBits | i);
    } else {
      net_.start_on(path, plan.parts[i].wire_bytes, rate, [this, t, part] { part_done(t, part); });
    }
  }
}

/// A channel part has arrived: the transfer ends after the part's fixed overhead.
void Runtime::Execution::part_done(int t, int part) {
  q_.after_tagged(plan_list_[transfers_[t].plan].parts[part].overhead, event_tag(Ev::FinishTransfer, t));
}

/// One part of transfer `t` is done; after the last, the transfer ends and so do its send and receive.
void Runtime::Execution::finish_transfer(int t) {
  TransferState& ts = transfers_[t];
  if (--ts.remaining > 0) return;
  const TransferState done = ts;
  free_transfers_.push_back(t);
  if (!records_.empty()) {
    const auto rec = records_.find(t);
    if (rec != records_.end()) {
      result_.ops[rec->second].end = q_.now();
      records_.erase(rec);
    }
  }
  const int src = kernels_[done.s.kernel].gpu, dst = kernels_[done.r.kernel].gpu;
  note_moving(kernels_[done.s.kernel].iteration, src, done.start);
  note_moving(kernels_[done.s.kernel].iteration, dst, done.start);
  if (trace_) {
    const std::uint64_t bytes = kernels_[done.s.kernel].spec->ops[done.s.op].bytes;
    trace_->span(src, "send to GPU" + std::to_string(dst), "send " + format_size(bytes), done.start,
                 q_.now());
  }
  kernel_op_done(done.s.kernel);
  kernel_op_done(done.r.kernel);
}

/// Copy-engine transfers: no partner, the model's copy plan on the P2P route.
void Runtime::Execution::start_copy(int k, int op_index) {
  const KernelInstance& ki = kernels_[k];
  const OpSpec& op = ki.spec->ops[op_index];
  const int src = op.peer, dst = ki.gpu;
  const models::TransferPlan plan = model_.copy_plan(op.bytes, runtime_.pair(src, dst));
  const std::span<const int> path = route(src, dst, Transport::P2p);
  const double wire = plan.parts.empty() ? 0.0 : plan.parts.front().wire_bytes;
  const double rate = plan.channel_rate;
  const Picoseconds start = q_.now();
  q_.after(plan.base_latency, [this, k, path, wire, rate, src, dst, start] {
    ++result_.flows;
    net_.start_on(path, wire, rate, [this, k, src, dst, start] {
      note_moving(kernels_[k].iteration, src, start);
      note_moving(kernels_[k].iteration, dst, start);
      kernel_op_done(k);
    });
  });
}

// ---- Collectives ----

/// Collective kernel `k` arrives; the last rank of its communicator to arrive begins the collective.
void Runtime::Execution::arrive(int k) {
  const KernelInstance& ki = kernels_[k];
  auto& arrived = rendezvous_[{ki.spec->comm, ki.coll_seq}];
  arrived.push_back(k);
  if (arrived.size() == program_.comms[ki.spec->comm].gpus.size()) {
    const std::vector<int> group = std::move(arrived);
    rendezvous_.erase({ki.spec->comm, ki.coll_seq});
    begin_collective(group);
  }
}

/// Every rank has arrived (`group`: their kernels): after the plan's latency its flows start.
void Runtime::Execution::begin_collective(const std::vector<int>& group) {
  const KernelInstance& first = kernels_[group.front()];
  const int comm = first.spec->comm;
  const CollectiveSpec& c = *first.spec->collective;
  check_same_collective(group);
  const models::CollectivePlan& plan = collective_plan(comm, c);
  const Picoseconds start = q_.now();
  const bool recorded = first.iteration == program_.warmup;
  const std::size_t record = result_.collectives.size();
  if (recorded) {
    result_.collectives.push_back({c.op, c.bytes, plan.algorithm, plan.protocol, plan.channels, start, 0});
  }
  // One slot per collective, shared by every flow's completion callback (a 16,384-rank collective starts
  // ~300,000 flows).
  CollState cs;
  cs.group = group;
  cs.remaining = static_cast<int>(plan.flows.size());
  cs.recorded = recorded;
  cs.record = record;
  cs.start = start;
  cs.plan = &plan;
  cs.comm = comm;
  int c_id;
  if (!free_colls_.empty()) {
    c_id = free_colls_.back();
    free_colls_.pop_back();
    colls_[c_id] = std::move(cs);
  } else {
    c_id = static_cast<int>(colls_.size());
    colls_.push_back(std::move(cs));
  }
  q_.after_tagged(plan.latency, event_tag(Ev::StartCollFlows, c_id));
}

/// Throws unless every kernel of `group` issues the same operation, size and root.
void Runtime::Execution::check_same_collective(const std::vector<int>& group) const {
  const KernelInstance& first = kernels_[group.front()];
  const int comm = first.spec->comm;
  const CollectiveSpec& c = *first.spec->collective;
  for (int k : group) {
    const CollectiveSpec& o = *kernels_[k].spec->collective;
    if (o.op != c.op || o.bytes != c.bytes || o.root != c.root) {
      throw SimulationError("collective mismatch on communicator " + std::to_string(comm) + ": GPU " +
                            std::to_string(first.gpu) + " issues " + models::coll_op_name(c.op) + " of " +
                            std::to_string(c.bytes) + " bytes, GPU " + std::to_string(kernels_[k].gpu) +
                            " issues " + models::coll_op_name(o.op) + " of " + std::to_string(o.bytes) +
                            " bytes at the same position");
    }
  }
}

/// The model's plan for collective `c` on communicator `comm`, made once per (comm, op, bytes, root).
const models::CollectivePlan& Runtime::Execution::collective_plan(int comm, const CollectiveSpec& c) {
  auto pk = std::make_tuple(comm, static_cast<int>(c.op), c.bytes, c.root);
  auto pit = coll_plans_.find(pk);
  if (pit == coll_plans_.end())
    pit = coll_plans_
              .emplace(pk, model_.collective(c.op, c.bytes, c.root, comms_[comm], comm_nodes_[comm],
                                             comm_nics_[comm]))
              .first;
  return pit->second;
}

/// Collective `c_id` starts its plan's flows (a plan without flows ends at once).
void Runtime::Execution::start_coll_flows(int c_id) {
  const models::CollectivePlan& plan = *colls_[c_id].plan;
  if (plan.flows.empty()) {
    colls_[c_id].remaining = 1;
    finish_coll(c_id);
    return;
  }
  const std::vector<int>& gpus = program_.comms[colls_[c_id].comm].gpus;
  // The plan's routes, found once: a plan serves one communicator, so its flows always take the same routes.
  std::vector<std::span<const int>>& routes = coll_routes_[&plan];
  if (routes.empty()) {
    for (const models::CollFlow& f : plan.flows) {
      const int src = gpus[f.src], dst = gpus[f.dst];
      const Impl::PairCache pc = impl_.entry(topo_, src, dst);
      routes.push_back(route(pc, src, dst, model_.transport(impl_.info(pc))));
    }
  }
  const auto cap = [&](std::size_t i) { return plan.flow_rate * plan.flows[i].channel_share; };
  for (std::size_t i = 0; i < plan.flows.size(); ++i) {
    ++result_.flows;
    if (const std::size_t next = i + 4; next < plan.flows.size())  // (a hint: see FlowNetwork::prefetch)
      net_.prefetch(routes[next], plan.flows[next].wire_bytes, cap(next));
    net_.start_tagged(routes[i], plan.flows[i].wire_bytes, cap(i),
                      kCollTag | static_cast<std::uint64_t>(c_id));
  }
}

/// One flow of collective `c_id` is done; after the last, the collective ends on every rank.
void Runtime::Execution::finish_coll(int c_id) {
  if (--colls_[c_id].remaining > 0) return;
  CollState done = std::move(colls_[c_id]);
  free_colls_.push_back(c_id);
  if (done.recorded) result_.collectives[done.record].end = q_.now();
  for (int k : done.group) note_moving(kernels_[k].iteration, kernels_[k].gpu, done.start);
  for (int k : done.group) kernel_op_done(k);
}

// ---- The event loop and what follows it ----

void Runtime::Execution::run_events() {
  if (hooks_.cancel || hooks_.progress) {
    run_events_polled();
  } else {
    result_.events = q_.run();
  }
}

/// Runs the events, polling the hooks every 4,096 events: cheap next to the events themselves, and well
/// under a millisecond apart. Throws Interrupted when the cancel flag stopped the run.
void Runtime::Execution::run_events_polled() {
  const auto wall_start = std::chrono::steady_clock::now();
  auto last_report = wall_start;
  auto poll = [&] {
    if (hooks_.cancel && hooks_.cancel->load(std::memory_order_relaxed)) return false;
    if (hooks_.progress) {
      const auto now = std::chrono::steady_clock::now();
      if (std::chrono::duration<double>(now - last_report).count() >= hooks_.progress_interval_s) {
        last_report = now;
        RunProgress p;
        p.now = q_.now();
        p.events = q_.events_run();
        p.flows = result_.flows;
        p.active_flows = net_.active_flows();
        p.wall_seconds = std::chrono::duration<double>(now - wall_start).count();
        hooks_.progress(p);
      }
    }
    return true;
  };
  result_.events = q_.run(poll, 4096);
  if (!q_.empty()) {
    throw Interrupted("interrupted at " + std::to_string(static_cast<double>(q_.now()) / 1e6) +
                      " us of simulated time, after " + std::to_string(result_.events) + " events and " +
                      std::to_string(result_.flows) + " flows");
  }
}

/// Anything left unfinished means a send or receive without a partner: throws, saying who waits on what
/// (the first 8 such kernels).
void Runtime::Execution::report_deadlock() const {
  std::ostringstream waits;
  int stuck = 0;
  for (int k = kernels_.base(); k < kernels_.size(); ++k) {
    const KernelInstance& ki = kernels_[k];
    if (ki.end >= 0) continue;
    if (++stuck > 8) continue;
    waits << "\n  GPU " << ki.gpu << " stream " << ki.spec->stream << " '" << ki.spec->name << "' (iteration "
          << ki.iteration << ")";
    describe_wait(ki, waits);
  }
  if (stuck > 0) {
    throw SimulationError("the schedule deadlocks: " + std::to_string(stuck) + " kernel(s) cannot finish" +
                          waits.str());
  }
}

/// What unfinished kernel `ki` waits on.
void Runtime::Execution::describe_wait(const KernelInstance& ki, std::ostream& waits) const {
  if (!ki.started) {
    bool dep_waiting = false;
    for (int i = 1; ki.deps >= 0 && i <= deps_pool_[ki.deps]; ++i)
      dep_waiting = dep_waiting || !ended(deps_pool_[ki.deps + i]);
    waits << (dep_waiting ? " never started: it waits for another stream of its GPU that did not finish"
                          : " never started: an earlier kernel on its stream did not finish");
    return;
  }
  if (ki.spec->collective) {
    const auto& members = program_.comms[ki.spec->comm].gpus;
    std::set<int> arrived;
    auto rit = rendezvous_.find({ki.spec->comm, ki.coll_seq});
    if (rit != rendezvous_.end()) {
      for (int k : rit->second) arrived.insert(kernels_[k].gpu);
    }
    waits << " waits in " << models::coll_op_name(ki.spec->collective->op) << " for GPU(s)";
    for (int g : members) {
      if (!arrived.count(g)) waits << " " << g;
    }
    waits << " on communicator " << ki.spec->comm;
    return;
  }
  for (const auto* table : {&sends_, &recvs_}) {
    std::map<std::tuple<int, int, int>, std::vector<Posted>> sorted;  // in (comm, src, dst) order
    table->for_each([&](const PostKey& k, const std::vector<Posted>& posts) {
      sorted[{k.comm, k.src, k.dst}] = posts;
    });
    for (const auto& [key, list] : sorted) {
      for (const Posted& p : list) {
        if (&kernels_[p.kernel] != &ki) continue;
        const bool is_send = table == &sends_;
        waits << (is_send ? " waits for GPU " : " waits for a send from GPU ")
              << (is_send ? std::get<2>(key) : std::get<1>(key)) << (is_send ? " to receive" : "")
              << " on communicator " << std::get<0>(key);
      }
    }
  }
}

/// Per GPU, the time its data was moving in the measured iterations: the length of the union of its spans.
void Runtime::Execution::sum_transfer_busy() {
  for (std::size_t gpu = 0; gpu < moving_.size(); ++gpu) {
    const Moving& m = moving_[gpu];
    if (!m.used) continue;
    Picoseconds total = m.closed;
    for (std::size_t i = m.head; i < m.spans.size(); ++i) total += m.spans[i].second - m.spans[i].first;
    result_.busy[static_cast<int>(gpu)].transfer = total;
  }
}

RunResult Runtime::run(const Program& program, Trace* trace, const RunOptions& options) {
  return Execution(*this, program, trace, options).run();
}

}  // namespace commsim::sim
