// Building one machine's link graph from its topo matrix: GPU choice, NVLink fabric, PCIe tree and NICs.
#include "commsim/topo/builder.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <optional>

#include "commsim/core/error.hpp"

namespace commsim::topo {
namespace {

using models::GpuSpec;
using models::HardwareCatalog;

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(int n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void unite(int a, int b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);  // the smallest member is the representative
  }
};

/// Groups members by representative, in order of their smallest member.
std::vector<std::vector<int>> groups_of(UnionFind& uf, const std::vector<int>& members) {
  std::map<int, std::vector<int>> by_root;
  for (int m : members) by_root[uf.find(m)].push_back(m);
  std::vector<std::vector<int>> out;
  for (auto& [root, g] : by_root) out.push_back(std::move(g));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
  return out;
}

const GpuSpec* newest(const HardwareCatalog& hw, const std::function<bool(const GpuSpec&)>& pred) {
  const GpuSpec* best = nullptr;
  for (const GpuSpec& g : hw.gpus()) {
    if (pred(g) && (!best || g.release_year >= best->release_year)) best = &g;
  }
  return best;
}

/// A NUMA node number as printed in the NUMA Affinity column; nullopt for "N/A", empty or absurd values.
std::optional<int> numa_number(const std::string& s) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v < 0 || v > 4096) return std::nullopt;
  return v;
}

/// The NVLink shape of the GPU block of a matrix.
struct NvShape {
  bool any = false;
  bool all_pairs_same = false;  ///< every GPU pair is NV<n> with the same n
  int pair_links = 0;           ///< that n
  int max_total = 0;            ///< largest per-GPU sum of NV counts
};

NvShape nv_shape(const TopoMatrix& m) {
  NvShape s;
  const int g = m.gpu_count();
  s.all_pairs_same = g >= 2;
  for (int a = 0; a < g; ++a) {
    int total = 0;
    for (int b = 0; b < g; ++b) {
      if (a == b) continue;
      const MatrixCell& c = m.cell(a, b);
      if (c.code == PairCode::NvLink) {
        s.any = true;
        total += c.nvlinks;
        if (s.pair_links == 0) s.pair_links = c.nvlinks;
        if (c.nvlinks != s.pair_links) s.all_pairs_same = false;
      } else {
        s.all_pairs_same = false;
      }
    }
    s.max_total = std::max(s.max_total, total);
  }
  if (!s.any) s.all_pairs_same = false;
  return s;
}

SourceLocation located(const TopoMatrix& m, int a, int b) {
  return m.where(m.cell(a, b).line > 0 ? m.cell(a, b) : m.cell(b, a));
}

}  // namespace

void Diagnostics::warn(const std::string& message) {
  if (std::find(warnings_.begin(), warnings_.end(), message) == warnings_.end()) warnings_.push_back(message);
}

std::pair<const GpuSpec*, std::string> default_gpu_for(const TopoMatrix& m, const HardwareCatalog& hw) {
  const NvShape s = nv_shape(m);
  if (!s.any) {
    if (auto* g = newest(hw, [](const GpuSpec& x) { return x.nvlink_links == 0; })) {
      return {g, "no NVLink in the matrix: the newest GPU without NVLink"};
    }
  }
  if (s.all_pairs_same) {
    const int n = s.pair_links;
    if (auto* g = newest(hw, [n](const GpuSpec& x) { return x.nvswitch && x.nvlink_links == n; })) {
      return {g, "every GPU pair is NV" + std::to_string(n) + ": the newest NVSwitch GPU with " +
                     std::to_string(n) + " NVLinks"};
    }
  }
  const int total = s.max_total;
  if (auto* g = newest(hw, [total](const GpuSpec& x) { return x.nvlink_links == total; })) {
    return {g, "NVLink bundles of up to " + std::to_string(total) + " links per GPU: the newest GPU with " +
                   std::to_string(total) + " NVLinks"};
  }
  int fewest = 1 << 30;
  for (const GpuSpec& x : hw.gpus()) {
    if (x.nvlink_links >= total) fewest = std::min(fewest, x.nvlink_links);
  }
  if (auto* g = newest(hw, [fewest](const GpuSpec& x) { return x.nvlink_links == fewest; })) {
    return {g, "NVLink bundles of up to " + std::to_string(total) +
                   " links per GPU: the newest GPU with the fewest NVLinks that fit"};
  }
  return {newest(hw, [](const GpuSpec&) { return true; }), "no catalogue GPU matches: the newest GPU"};
}

namespace {

/// The matrix with only the NICs `keep` says to keep (by NIC index: 0 = the first NIC column).
template <typename Keep>
TopoMatrix kept_nics(const TopoMatrix& m, Keep keep) {
  std::vector<std::size_t> kept;
  int nics = 0;
  for (std::size_t d = 0; d < m.devices.size(); ++d) {
    if (static_cast<int>(d) < m.gpu_count() || keep(nics++)) kept.push_back(d);
  }
  TopoMatrix out;
  out.file = m.file;
  out.legend_seen = m.legend_seen;
  for (std::size_t a : kept) {
    out.devices.push_back(m.devices[a]);
    std::vector<MatrixCell> row;
    for (std::size_t b : kept) row.push_back(m.cells[a][b]);
    out.cells.push_back(std::move(row));
  }
  return out;
}

/// What the phases of add_matrix_node share: the machine's inputs, what earlier phases decided, and the node
/// being filled in.
struct NodeBuild {
  Topology& topo;
  const TopoMatrix& m;
  const NodeBuildOptions& opt;
  const HardwareCatalog& hw;
  Diagnostics& diag;
  std::string source;       ///< file or preset name, for messages
  int node = 0;             ///< the machine's index in topo.nodes
  int g_count = 0;          ///< GPUs in the matrix
  int d_count = 0;          ///< devices in the matrix: GPUs, then NICs
  GpuSpec spec;             ///< the chosen GPU, what-if overrides applied
  std::string origin;       ///< how the GPU was chosen
  double link_bw = 0;       ///< bytes/s per direction of one NVLink
  std::vector<int> active;  ///< active NVLinks per GPU
  NodeInfo info;
  std::vector<Vertex> vtx;  ///< the vertex of each matrix device

  NodeBuild(Topology& t, const TopoMatrix& matrix, const NodeBuildOptions& o, const HardwareCatalog& h,
            Diagnostics& d)
      : topo(t),
        m(matrix),
        opt(o),
        hw(h),
        diag(d),
        source(o.source.empty() ? matrix.file : o.source),
        node(static_cast<int>(t.nodes.size())),
        g_count(matrix.gpu_count()),
        d_count(static_cast<int>(matrix.devices.size())) {}
  GpuInfo& gpu_info(int d) { return topo.gpus[info.gpus[d]]; }
};

/// Phase 1: which GPU (--gpu, nvlink -s or the default rule), with the what-if overrides applied.
void choose_gpu(NodeBuild& nb) {
  const NodeBuildOptions& opt = nb.opt;
  const HardwareCatalog& hw = nb.hw;
  if (!opt.gpu.empty()) {
    nb.spec = hw.gpu(opt.gpu);
    nb.origin = opt.gpu_origin.empty() ? "--gpu" : opt.gpu_origin;
  } else if (opt.nvlink && hw.find_gpu(opt.nvlink->gpus.front().name)) {
    nb.spec = *hw.find_gpu(opt.nvlink->gpus.front().name);
    nb.origin = "nvidia-smi nvlink -s (" + opt.nvlink->file + ")";
  } else {
    if (opt.nvlink) {
      nb.diag.warn(opt.nvlink->file + ": GPU '" + opt.nvlink->gpus.front().name +
                   "' is not in the catalogue");
    }
    auto [g, reason] = default_gpu_for(nb.m, hw);
    nb.spec = *g;
    nb.origin = "default (" + reason + ")";
    nb.diag.warn(nb.source + " does not say which GPU it has; assuming " + nb.spec.name + " (" + reason +
                 "). Pass --gpu NAME to choose; known: " + hw.gpu_names());
  }
  const NodeOverrides& ov = opt.overrides;
  GpuSpec& spec = nb.spec;
  if (ov.nvlink_links) spec.nvlink_links = *ov.nvlink_links;
  if (ov.nvlink_link_bandwidth) spec.nvlink_link_bandwidth = *ov.nvlink_link_bandwidth;
  if (ov.pcie_gen) spec.pcie_gen = *ov.pcie_gen;
  if (ov.pcie_lanes) spec.pcie_lanes = *ov.pcie_lanes;
  if (ov.nic_bandwidth) spec.nic_bandwidth = *ov.nic_bandwidth;
}

/// Phase 2: active links per GPU and the measured link rate from nvlink -s (the catalogue's without it).
void read_nvlink_status(NodeBuild& nb) {
  const GpuSpec& spec = nb.spec;
  nb.link_bw = spec.nvlink_link_bandwidth;
  nb.active.assign(nb.g_count, spec.nvlink_links);
  if (!nb.opt.nvlink) return;
  const auto& st = *nb.opt.nvlink;
  if (static_cast<int>(st.gpus.size()) != nb.g_count) {
    nb.diag.warn(st.file + " lists " + std::to_string(st.gpus.size()) + " GPUs but " + nb.source + " has " +
                 std::to_string(nb.g_count) + "; ignoring its link counts");
    return;
  }
  for (int i = 0; i < nb.g_count; ++i) {
    nb.active[i] = st.gpus[i].active_links();
    // nvlink_links = N in a what-if caps the links the capture shows.
    if (nb.opt.overrides.nvlink_links) nb.active[i] = std::min(nb.active[i], *nb.opt.overrides.nvlink_links);
  }
  double rate = 0;
  for (double r : st.gpus.front().link_rate) rate = std::max(rate, r);
  if (rate > 0 && spec.nvlink_signaling_rate > 0 &&
      std::fabs(rate / spec.nvlink_signaling_rate - 1.0) > 0.05 && !nb.opt.overrides.nvlink_link_bandwidth) {
    nb.link_bw = spec.nvlink_link_bandwidth * rate / spec.nvlink_signaling_rate;
    nb.topo.notes.push_back(st.file + ": links run at " + std::to_string(rate / 1e9) + " GB/s, not the " +
                            spec.name + " rate; NVLink bandwidth scaled to match");
  }
}

/// Phase 3: the node's summary and a vertex per GPU and NIC, in matrix order, with their GpuInfo and NicInfo.
void add_devices(NodeBuild& nb) {
  const NodeBuildOptions& opt = nb.opt;
  Topology& topo = nb.topo;
  nb.info.name = opt.name_prefix.empty() ? "node0" : opt.name_prefix.substr(0, opt.name_prefix.size() - 1);
  nb.info.source = nb.source;
  nb.info.gpu_model = nb.spec.name;
  nb.info.gpu_origin = nb.origin;
  nb.vtx = std::vector<Vertex>(nb.d_count);
  for (int d = 0; d < nb.d_count; ++d) {
    const MatrixDevice& dev = nb.m.devices[d];
    if (dev.kind == MatrixDevice::Kind::Gpu) {
      GpuInfo g;
      g.index = static_cast<int>(topo.gpus.size());
      g.node = nb.node;
      g.local_index = dev.index;
      g.name = opt.name_prefix + dev.label;
      g.model = nb.spec.name;
      g.cpu_affinity = dev.cpu_affinity;
      g.numa = numa_number(dev.numa_affinity).value_or(-1);
      g.pcie_gen = nb.spec.pcie_gen;
      g.pcie_lanes = nb.spec.pcie_lanes;
      g.vertex = topo.add_vertex({VertexKind::Gpu, g.name, nb.node, g.index});
      nb.vtx[d] = g.vertex;
      nb.info.gpus.push_back(g.index);
      topo.gpus.push_back(g);
    } else {
      NicInfo n;
      n.index = static_cast<int>(topo.nics.size());
      n.node = nb.node;
      n.local_index = dev.index;
      n.name = opt.name_prefix + dev.label;
      n.device = dev.device;
      n.bandwidth = nb.spec.nic_bandwidth;
      n.vertex = topo.add_vertex({VertexKind::Nic, n.name, nb.node, n.index});
      nb.vtx[d] = n.vertex;
      nb.info.nics.push_back(n.index);
      topo.nics.push_back(n);
    }
  }
}

/// Phase 4: every GPU pair's code and NCCL path type; an NV count above the GPU's links is an InputError.
void record_gpu_pairs(NodeBuild& nb) {
  const GpuSpec& spec = nb.spec;
  nb.info.pairs.assign(nb.g_count, std::vector<GpuPair>(nb.g_count));
  for (int a = 0; a < nb.g_count; ++a) {
    for (int b = 0; b < nb.g_count; ++b) {
      const MatrixCell& c = nb.m.cell(a, b);
      const bool nvlink = c.code == PairCode::NvLink;
      nb.info.pairs[a][b] = {c.code, nvlink ? c.nvlinks : 0, nccl_path_type(c.code)};
      if (nvlink && c.nvlinks > spec.nvlink_links && !nb.opt.overrides.nvlink_links) {
        throw InputError(located(nb.m, a, b), "NV" + std::to_string(c.nvlinks) + " is more NVLinks than a " +
                                                  spec.name + " has (" + std::to_string(spec.nvlink_links) +
                                                  "); is the GPU (" + nb.origin + ") right?");
      }
    }
  }
}

/// Phase 5a: one NVSwitch that each GPU reaches over its active links; every pair becomes NV<the fewer
/// links of the two>. A GPU with no active link gets no NVSwitch link: its pairs go over PCIe (phase 8).
void add_nvswitch(NodeBuild& nb, int per_gpu) {
  if (per_gpu <= 0) {  // nvlink_links = 0: no NVLink at all
    nb.info.nvlink_fabric = "none";
    return;
  }
  nb.info.nvlink_fabric = "nvswitch";
  const Vertex sw = nb.topo.add_vertex({VertexKind::NvSwitch, nb.opt.name_prefix + "nvswitch", nb.node, -1});
  std::vector<int> links(nb.g_count);
  for (int a = 0; a < nb.g_count; ++a) {
    links[a] = std::min(per_gpu, nb.active[a]);
    if (links[a] < per_gpu) {
      nb.diag.warn(nb.source + ": GPU" + std::to_string(a) + " has " + std::to_string(links[a]) + " of " +
                   std::to_string(per_gpu) + " NVLinks active" +
                   (links[a] == 0 ? "; its GPU pairs go over PCIe (NCCL uses SHM)" : ""));
    }
    nb.gpu_info(a).nvlinks = links[a];
    nb.gpu_info(a).nvlink_bandwidth = links[a] * nb.link_bw;
    if (links[a] == 0) continue;  // no zero-bandwidth link: the GPU is off the NVLink fabric
    nb.topo.add_link(nb.vtx[a], sw,
                     {LinkKind::NvLink, links[a] * nb.link_bw, nb.hw.latency().nvswitch, links[a], 0});
  }
  for (int a = 0; a < nb.g_count; ++a) {
    for (int b = 0; b < nb.g_count; ++b) {
      const int n = std::min(links[a], links[b]);
      if (a != b && n > 0) nb.info.pairs[a][b] = {PairCode::NvLink, n, nccl_path_type(PairCode::NvLink)};
    }
  }
}

/// Phase 5b: direct NVLink bundles between GPU pairs; more bundled links than the GPU has is an InputError. A
/// GPU with no active link (`nvidia-smi nvlink -s`, or nvlink_links = 0) keeps no bundle: its pairs go over
/// PCIe (phase 8).
void add_nvlink_bundles(NodeBuild& nb) {
  const GpuSpec& spec = nb.spec;
  const TopoMatrix& m = nb.m;
  nb.info.nvlink_fabric = "direct";
  auto off = [&](int g) { return nb.active[g] <= 0; };
  bool any = false;
  for (int a = 0; a < nb.g_count; ++a) {
    int total = 0;
    for (int b = 0; b < nb.g_count; ++b) {
      const MatrixCell& c = m.cell(a, b);
      if (c.code != PairCode::NvLink || off(a) || off(b)) continue;
      total += c.nvlinks;
      if (a < b) {
        nb.topo.add_link(nb.vtx[a], nb.vtx[b],
                         {LinkKind::NvLink, c.nvlinks * nb.link_bw, nb.hw.latency().nvlink, c.nvlinks, 0});
        any = true;
      }
    }
    if (off(a) && std::any_of(m.cells[a].begin(), m.cells[a].end(),
                              [](const MatrixCell& c) { return c.code == PairCode::NvLink; })) {
      nb.diag.warn(nb.source + ": GPU" + std::to_string(a) +
                   " has no active NVLink; its GPU pairs go over PCIe (NCCL uses SHM)");
    }
    if (total > spec.nvlink_links) {
      int first = a == 0 ? 1 : 0;
      for (int b = 0; b < nb.g_count; ++b) {
        if (m.cell(a, b).code == PairCode::NvLink) {
          first = b;
          break;
        }
      }
      throw InputError(located(m, a, first), m.devices[a].label + " has " + std::to_string(total) +
                                                 " NVLinks in bundles, more than a " + spec.name + " has (" +
                                                 std::to_string(spec.nvlink_links) + ")");
    }
    nb.gpu_info(a).nvlinks = total;
    nb.gpu_info(a).nvlink_bandwidth = total * nb.link_bw;
  }
  if (!any) nb.info.nvlink_fabric = "none";
}

/// Phase 5: the NVLink fabric: none, one NVSwitch, or direct bundles.
void add_nvlink(NodeBuild& nb) {
  const NvShape shape = nv_shape(nb.m);
  const NodeOverrides& ov = nb.opt.overrides;
  const GpuSpec& spec = nb.spec;
  if (!shape.any) {
    nb.info.nvlink_fabric = "none";
  } else if (shape.all_pairs_same && (spec.nvswitch || ov.nvlink_links) &&
             (shape.pair_links >= spec.nvlink_links ||
              shape.pair_links * (nb.g_count - 1) > spec.nvlink_links || ov.nvlink_links)) {
    add_nvswitch(nb, ov.nvlink_links ? *ov.nvlink_links : shape.pair_links);
  } else {
    add_nvlink_bundles(nb);
  }
}

/// The PCIe tree as built: which devices share a NUMA domain (not SYS), a host bridge (not NODE), a switch
/// tree (PIX/PXB) and a leaf switch (PIX), and where the tree put each device, to check against the matrix.
struct PcieTree {
  UnionFind numa_uf, hb_uf, tree_uf, leaf_uf;
  std::vector<bool> informed;  ///< the matrix or an affinity says where the device is
  /// Per device: its leaf switch, switch tree, host bridge and NUMA domain in the built tree (-1: none).
  std::vector<int> implied_leaf, implied_tree, implied_hb, implied_numa;
  std::vector<Vertex> cpus;
  int hb_count = 0, sw_count = 0;  ///< host bridges and PCIe switches so far, for their names

  explicit PcieTree(int n)
      : numa_uf(n),
        hb_uf(n),
        tree_uf(n),
        leaf_uf(n),
        informed(n, false),
        implied_leaf(n, -1),
        implied_tree(n, -1),
        implied_hb(n, -1),
        implied_numa(n, -1) {}
};

/// Phase 6a: groups the devices by the matrix's PCIe codes and their affinities; devices nothing is known
/// about join the first NUMA domain.
void group_pcie_devices(const TopoMatrix& m, PcieTree& t) {
  const int d_count = static_cast<int>(m.devices.size());
  for (int a = 0; a < d_count; ++a) {
    for (int b = a + 1; b < d_count; ++b) {
      const int r = pcie_rank(m.cell(a, b).code);
      if (r > 0) t.informed[a] = t.informed[b] = true;
      if (r >= 1 && r <= 4) t.numa_uf.unite(a, b);
      if (r >= 1 && r <= 3) t.hb_uf.unite(a, b);
      if (r >= 1 && r <= 2) t.tree_uf.unite(a, b);
      if (r == 1) t.leaf_uf.unite(a, b);
    }
  }
  std::map<std::string, int> first_with_key;
  for (int d = 0; d < d_count; ++d) {
    const MatrixDevice& dev = m.devices[d];
    std::string key = numa_number(dev.numa_affinity) ? "numa:" + dev.numa_affinity
                      : !dev.cpu_affinity.empty()    ? "cpu:" + dev.cpu_affinity
                                                     : "";
    if (!key.empty()) {
      t.informed[d] = true;
      auto [it, fresh] = first_with_key.emplace(key, d);
      if (!fresh) t.numa_uf.unite(it->second, d);
    }
  }
  for (int d = 1; d < d_count; ++d) {
    if (!t.informed[d]) t.numa_uf.unite(0, d);
  }
}

/// A device's PCIe generation and lanes: the GPU's, or the platform's NIC lanes.
std::pair<int, int> pcie_of(const NodeBuild& nb, int d) {
  return nb.m.devices[d].kind == MatrixDevice::Kind::Gpu
             ? std::pair{nb.spec.pcie_gen, nb.spec.pcie_lanes}
             : std::pair{nb.spec.pcie_gen, nb.hw.host().nic_pcie_lanes};
}

/// A device's PCIe link to `parent`.
void attach(NodeBuild& nb, int d, Vertex parent) {
  const auto& lat = nb.hw.latency();
  auto [gen, lanes] = pcie_of(nb, d);
  nb.topo.add_link(
      nb.vtx[d], parent,
      {LinkKind::Pcie, nb.hw.pcie_bandwidth(gen, lanes), lat.pcie + lat.pcie_switch, lanes, gen});
}

/// A switch's x16 link to `parent`, at the newest generation of the devices `members` below it.
void uplink(NodeBuild& nb, const std::vector<int>& members, Vertex child, Vertex parent) {
  const auto& lat = nb.hw.latency();
  int gen = 0;
  for (int d : members) gen = std::max(gen, pcie_of(nb, d).first);
  nb.topo.add_link(child, parent,
                   {LinkKind::Pcie, nb.hw.pcie_bandwidth(gen, 16), lat.pcie + lat.pcie_switch, 16, gen});
}

/// Phase 6c: one switch tree under `bridge`: a lone device hangs off the bridge, one leaf group shares one
/// switch, several leaf groups get a switch each under a parent switch.
void add_switch_tree(NodeBuild& nb, PcieTree& t, const std::vector<int>& tree, Vertex bridge) {
  if (tree.size() == 1) {
    attach(nb, tree[0], bridge);
    return;
  }
  const auto leaves = groups_of(t.leaf_uf, tree);
  auto new_switch = [&]() {
    return nb.topo.add_vertex(
        {VertexKind::PcieSwitch, nb.opt.name_prefix + "pcisw" + std::to_string(t.sw_count++), nb.node, -1});
  };
  const int tree_id = tree.front();
  for (int d : tree) t.implied_tree[d] = tree_id;
  if (leaves.size() == 1) {
    const Vertex sw = new_switch();
    uplink(nb, tree, sw, bridge);
    for (int d : tree) {
      attach(nb, d, sw);
      t.implied_leaf[d] = tree_id;
    }
    return;
  }
  const Vertex parent = new_switch();
  uplink(nb, tree, parent, bridge);
  for (const auto& leaf : leaves) {
    const Vertex sw = new_switch();
    uplink(nb, leaf, sw, parent);
    for (int d : leaf) {
      attach(nb, d, sw);
      t.implied_leaf[d] = leaf.front();
    }
  }
}

/// Phase 6b: NUMA domain `k`: its CPU (SMP links to the CPUs before it), its host bridges and their trees.
void add_numa_domain(NodeBuild& nb, PcieTree& t, const std::vector<int>& dom, int k) {
  const auto& lat = nb.hw.latency();
  const auto& host = nb.hw.host();
  int numa_id = -1;  // unknown unless a device of the domain prints its NUMA affinity
  for (int d : dom) {
    if (auto v = numa_number(nb.m.devices[d].numa_affinity)) {
      numa_id = *v;
      break;
    }
  }
  const Vertex cpu =
      nb.topo.add_vertex({VertexKind::Cpu, nb.opt.name_prefix + "cpu" + std::to_string(k), nb.node, numa_id});
  for (const Vertex other : t.cpus) {
    nb.topo.add_link(cpu, other, {LinkKind::Smp, host.smp_bandwidth, lat.smp, 0, 0});
  }
  t.cpus.push_back(cpu);
  for (int d : dom) {
    t.implied_numa[d] = k;
    if (nb.m.devices[d].kind == MatrixDevice::Kind::Gpu) {
      nb.gpu_info(d).numa = numa_id;
    } else {
      nb.topo.nics[nb.info.nics[d - nb.g_count]].numa = numa_id;
    }
  }
  for (const auto& hb : groups_of(t.hb_uf, dom)) {
    const Vertex bridge =
        nb.topo.add_vertex({VertexKind::HostBridge,
                            nb.opt.name_prefix + "hostbridge" + std::to_string(t.hb_count), nb.node, -1});
    for (int d : hb) t.implied_hb[d] = t.hb_count;
    ++t.hb_count;
    nb.topo.add_link(bridge, cpu, {LinkKind::HostLink, host.root_complex_bandwidth, lat.host_bridge, 0, 0});
    for (const auto& tree : groups_of(t.tree_uf, hb)) add_switch_tree(nb, t, tree, bridge);
  }
}

/// Phase 6: the PCIe tree: a CPU per NUMA domain, host bridges, switch trees and leaf switches.
PcieTree add_pcie_tree(NodeBuild& nb) {
  PcieTree t(nb.d_count);
  group_pcie_devices(nb.m, t);
  std::vector<int> all(nb.d_count);
  std::iota(all.begin(), all.end(), 0);
  const auto domains = groups_of(t.numa_uf, all);
  for (std::size_t k = 0; k < domains.size(); ++k) add_numa_domain(nb, t, domains[k], static_cast<int>(k));
  return t;
}

/// Phase 7: warns when the built tree does not reproduce the matrix's PCIe codes; notes when the matrix says
/// nothing about PCIe or NUMA.
void check_pcie_tree(NodeBuild& nb, const PcieTree& t) {
  const TopoMatrix& m = nb.m;
  int mismatches = 0;
  std::string example;
  for (int a = 0; a < nb.d_count; ++a) {
    for (int b = a + 1; b < nb.d_count; ++b) {
      const int r = pcie_rank(m.cell(a, b).code);
      if (r == 0) continue;
      const int implied = t.implied_numa[a] != t.implied_numa[b]                            ? 5
                          : t.implied_hb[a] != t.implied_hb[b]                              ? 4
                          : t.implied_tree[a] < 0 || t.implied_tree[a] != t.implied_tree[b] ? 3
                          : t.implied_leaf[a] != t.implied_leaf[b]                          ? 2
                                                                                            : 1;
      if (implied != r) {
        if (mismatches++ == 0) {
          static const char* names[] = {"-", "PIX", "PXB", "PHB", "NODE", "SYS"};
          example = m.devices[a].label + "/" + m.devices[b].label + ": matrix " + names[r] + ", model " +
                    names[implied];
        }
      }
    }
  }
  if (mismatches > 0) {
    nb.diag.warn(nb.source + ": the inferred PCIe tree does not reproduce " + std::to_string(mismatches) +
                 " matrix cell(s), e.g. " + example + "; the matrix is not a tree");
  }
  if (!m.devices.empty() && std::none_of(t.informed.begin(), t.informed.end(), [](bool x) { return x; })) {
    nb.topo.notes.push_back(nb.source +
                            ": no PCIe or NUMA information; each device assumed on its own root port");
  }
}

/// The PCIe code the built tree gives two devices: PIX (one leaf switch), PXB (one switch tree), PHB (one
/// host bridge), NODE (one NUMA domain) or SYS.
PairCode implied_code(const PcieTree& t, int a, int b) {
  return t.implied_numa[a] != t.implied_numa[b]                            ? PairCode::Sys
         : t.implied_hb[a] != t.implied_hb[b]                              ? PairCode::Node
         : t.implied_tree[a] < 0 || t.implied_tree[a] != t.implied_tree[b] ? PairCode::Phb
         : t.implied_leaf[a] != t.implied_leaf[b]                          ? PairCode::Pxb
                                                                           : PairCode::Pix;
}

/// Phase 8: GPU pairs the matrix calls NV# but that have no NVLink between them in the built machine (a GPU
/// whose links are all inactive, or nvlink_links = 0) take the PCIe code of the tree: what nvidia-smi prints
/// for them and what NCCL sees (PHB, NODE and SYS pairs go through host memory, SHM, by default). Routes
/// already go over PCIe: the link graph has no NVLink edge for them. Other pairs keep their NVLinks.
void route_around_missing_nvlinks(NodeBuild& nb, const PcieTree& t) {
  for (int a = 0; a < nb.g_count; ++a) {
    for (int b = 0; b < nb.g_count; ++b) {
      GpuPair& p = nb.info.pairs[a][b];
      if (a == b || p.code != PairCode::NvLink) continue;
      const bool linked = nb.info.nvlink_fabric == "nvswitch"
                              ? nb.gpu_info(a).nvlinks > 0 && nb.gpu_info(b).nvlinks > 0
                              : nb.info.nvlink_fabric == "direct" && nb.active[a] > 0 && nb.active[b] > 0;
      if (linked) continue;
      const PairCode code = implied_code(t, a, b);
      p = {code, 0, nccl_path_type(code)};
    }
  }
}

}  // namespace

void add_matrix_node(Topology& topo, const TopoMatrix& full, const NodeBuildOptions& opt,
                     const HardwareCatalog& hw, Diagnostics& diag) {
  const NodeOverrides& ov = opt.overrides;
  TopoMatrix trimmed;
  if (ov.nics) trimmed = kept_nics(full, [&](int k) { return k < *ov.nics; });
  if (ov.use_nics) {
    trimmed = kept_nics(full, [&](int k) {
      return std::find(ov.use_nics->begin(), ov.use_nics->end(), k) != ov.use_nics->end();
    });
  }
  NodeBuild nb(topo, ov.nics || ov.use_nics ? trimmed : full, opt, hw, diag);
  choose_gpu(nb);
  read_nvlink_status(nb);
  add_devices(nb);
  record_gpu_pairs(nb);
  add_nvlink(nb);
  const PcieTree tree = add_pcie_tree(nb);
  check_pcie_tree(nb, tree);
  route_around_missing_nvlinks(nb, tree);
  topo.nodes.push_back(std::move(nb.info));
}

}  // namespace commsim::topo
