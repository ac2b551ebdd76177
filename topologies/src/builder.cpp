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

const MatrixCell& located(const TopoMatrix& m, int a, int b) {
  return m.cell(a, b).where.line > 0 ? m.cell(a, b) : m.cell(b, a);
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

/// The matrix without the NICs after the first `keep`.
TopoMatrix first_nics(const TopoMatrix& m, int keep) {
  std::vector<std::size_t> kept;
  int nics = 0;
  for (std::size_t d = 0; d < m.devices.size(); ++d) {
    if (static_cast<int>(d) < m.gpu_count() || nics++ < keep) kept.push_back(d);
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

}  // namespace

void add_matrix_node(Topology& topo, const TopoMatrix& full, const NodeBuildOptions& opt,
                     const HardwareCatalog& hw, Diagnostics& diag) {
  const TopoMatrix trimmed = opt.overrides.nics ? first_nics(full, *opt.overrides.nics) : TopoMatrix{};
  const TopoMatrix& m = opt.overrides.nics ? trimmed : full;
  const std::string source = opt.source.empty() ? m.file : opt.source;
  // 1. Which GPU.
  GpuSpec spec;
  std::string origin;
  if (!opt.gpu.empty()) {
    spec = hw.gpu(opt.gpu);
    origin = opt.gpu_origin.empty() ? "--gpu" : opt.gpu_origin;
  } else if (opt.nvlink && hw.find_gpu(opt.nvlink->gpus.front().name)) {
    spec = *hw.find_gpu(opt.nvlink->gpus.front().name);
    origin = "nvidia-smi nvlink -s (" + opt.nvlink->file + ")";
  } else {
    if (opt.nvlink) {
      diag.warn(opt.nvlink->file + ": GPU '" + opt.nvlink->gpus.front().name + "' is not in the catalogue");
    }
    auto [g, reason] = default_gpu_for(m, hw);
    spec = *g;
    origin = "default (" + reason + ")";
    diag.warn(source + " does not say which GPU it has; assuming " + spec.name + " (" + reason +
              "). Pass --gpu NAME to choose; known: " + hw.gpu_names());
  }
  const NodeOverrides& ov = opt.overrides;
  if (ov.nvlink_links) spec.nvlink_links = *ov.nvlink_links;
  if (ov.nvlink_link_bandwidth) spec.nvlink_link_bandwidth = *ov.nvlink_link_bandwidth;
  if (ov.pcie_gen) spec.pcie_gen = *ov.pcie_gen;
  if (ov.pcie_lanes) spec.pcie_lanes = *ov.pcie_lanes;
  if (ov.nic_bandwidth) spec.nic_bandwidth = *ov.nic_bandwidth;
  const auto& lat = hw.latency();
  const auto& host = hw.host();

  const int g_count = m.gpu_count();
  const int d_count = static_cast<int>(m.devices.size());
  const int node = static_cast<int>(topo.nodes.size());

  // 2. nvlink -s: active links and measured link rate.
  double link_bw = spec.nvlink_link_bandwidth;
  std::vector<int> active(g_count, spec.nvlink_links);
  if (opt.nvlink) {
    const auto& st = *opt.nvlink;
    if (static_cast<int>(st.gpus.size()) != g_count) {
      diag.warn(st.file + " lists " + std::to_string(st.gpus.size()) + " GPUs but " + source + " has " +
                std::to_string(g_count) + "; ignoring its link counts");
    } else {
      for (int i = 0; i < g_count; ++i) active[i] = st.gpus[i].active_links();
      double rate = 0;
      for (double r : st.gpus.front().link_rate) rate = std::max(rate, r);
      if (rate > 0 && spec.nvlink_signaling_rate > 0 &&
          std::fabs(rate / spec.nvlink_signaling_rate - 1.0) > 0.05 && !ov.nvlink_link_bandwidth) {
        link_bw = spec.nvlink_link_bandwidth * rate / spec.nvlink_signaling_rate;
        topo.notes.push_back(st.file + ": links run at " + std::to_string(rate / 1e9) + " GB/s, not the " +
                             spec.name + " rate; NVLink bandwidth scaled to match");
      }
    }
  }

  NodeInfo info;
  info.name = opt.name_prefix.empty() ? "node0" : opt.name_prefix.substr(0, opt.name_prefix.size() - 1);
  info.source = source;
  info.gpu_model = spec.name;
  info.gpu_origin = origin;
  info.pairs.assign(g_count, std::vector<GpuPair>(g_count));

  // 3. GPU and NIC vertices.
  std::vector<Vertex> vtx(d_count);
  for (int d = 0; d < d_count; ++d) {
    const MatrixDevice& dev = m.devices[d];
    if (dev.kind == MatrixDevice::Kind::Gpu) {
      GpuInfo g;
      g.index = static_cast<int>(topo.gpus.size());
      g.node = node;
      g.local_index = dev.index;
      g.name = opt.name_prefix + dev.label;
      g.model = spec.name;
      g.cpu_affinity = dev.cpu_affinity;
      g.numa = numa_number(dev.numa_affinity).value_or(-1);
      g.pcie_gen = spec.pcie_gen;
      g.pcie_lanes = spec.pcie_lanes;
      g.vertex = topo.add_vertex({VertexKind::Gpu, g.name, node, g.index});
      vtx[d] = g.vertex;
      info.gpus.push_back(g.index);
      topo.gpus.push_back(g);
    } else {
      NicInfo n;
      n.index = static_cast<int>(topo.nics.size());
      n.node = node;
      n.local_index = dev.index;
      n.name = opt.name_prefix + dev.label;
      n.device = dev.device;
      n.bandwidth = spec.nic_bandwidth;
      n.vertex = topo.add_vertex({VertexKind::Nic, n.name, node, n.index});
      vtx[d] = n.vertex;
      info.nics.push_back(n.index);
      topo.nics.push_back(n);
    }
  }
  auto gpu_info = [&](int d) -> GpuInfo& { return topo.gpus[info.gpus[d]]; };

  // 4. NVLink: one NVSwitch fabric, or direct bundles.
  const NvShape shape = nv_shape(m);
  for (int a = 0; a < g_count; ++a) {
    for (int b = 0; b < g_count; ++b) {
      const MatrixCell& c = m.cell(a, b);
      info.pairs[a][b] = {c.code, c.code == PairCode::NvLink ? c.nvlinks : 0, nccl_path_type(c.code)};
      if (c.code == PairCode::NvLink && c.nvlinks > spec.nvlink_links && !ov.nvlink_links) {
        throw InputError(located(m, a, b).where, "NV" + std::to_string(c.nvlinks) +
                                                     " is more NVLinks than a " + spec.name + " has (" +
                                                     std::to_string(spec.nvlink_links) + "); is the GPU (" +
                                                     origin + ") right?");
      }
    }
  }
  if (!shape.any) {
    info.nvlink_fabric = "none";
  } else if (shape.all_pairs_same && (spec.nvswitch || ov.nvlink_links) &&
             (shape.pair_links >= spec.nvlink_links || shape.pair_links * (g_count - 1) > spec.nvlink_links ||
              ov.nvlink_links)) {
    info.nvlink_fabric = "nvswitch";
    const int per_gpu = ov.nvlink_links ? *ov.nvlink_links : shape.pair_links;
    const Vertex sw = topo.add_vertex({VertexKind::NvSwitch, opt.name_prefix + "nvswitch", node, -1});
    for (int a = 0; a < g_count; ++a) {
      const int links = std::min(per_gpu, active[a]);
      if (links < per_gpu) {
        diag.warn(source + ": GPU" + std::to_string(a) + " has " + std::to_string(links) + " of " +
                  std::to_string(per_gpu) + " NVLinks active");
      }
      topo.add_link(vtx[a], sw, {LinkKind::NvLink, links * link_bw, lat.nvswitch, links, 0});
      gpu_info(a).nvlinks = links;
      gpu_info(a).nvlink_bandwidth = links * link_bw;
      for (int b = 0; b < g_count; ++b) {
        if (a != b) info.pairs[a][b] = {PairCode::NvLink, per_gpu, nccl_path_type(PairCode::NvLink)};
      }
    }
  } else {
    info.nvlink_fabric = "direct";
    for (int a = 0; a < g_count; ++a) {
      int total = 0;
      for (int b = 0; b < g_count; ++b) {
        const MatrixCell& c = m.cell(a, b);
        if (c.code != PairCode::NvLink) continue;
        total += c.nvlinks;
        if (a < b)
          topo.add_link(vtx[a], vtx[b], {LinkKind::NvLink, c.nvlinks * link_bw, lat.nvlink, c.nvlinks, 0});
      }
      if (total > spec.nvlink_links) {
        int first = a == 0 ? 1 : 0;
        for (int b = 0; b < g_count; ++b) {
          if (m.cell(a, b).code == PairCode::NvLink) {
            first = b;
            break;
          }
        }
        throw InputError(located(m, a, first).where, m.devices[a].label + " has " + std::to_string(total) +
                                                         " NVLinks in bundles, more than a " + spec.name +
                                                         " has (" + std::to_string(spec.nvlink_links) + ")");
      }
      gpu_info(a).nvlinks = total;
      gpu_info(a).nvlink_bandwidth = total * link_bw;
    }
  }

  // 5. PCIe tree: NUMA domains (not SYS), host bridges (not NODE), switch trees (PIX/PXB), leaf switches
  // (PIX).
  auto rank = [&](int a, int b) { return pcie_rank(m.cell(a, b).code); };
  std::vector<int> all(d_count);
  std::iota(all.begin(), all.end(), 0);
  UnionFind numa_uf(d_count), hb_uf(d_count), tree_uf(d_count), leaf_uf(d_count);
  std::vector<bool> informed(d_count, false);
  for (int a = 0; a < d_count; ++a) {
    for (int b = a + 1; b < d_count; ++b) {
      const int r = rank(a, b);
      if (r > 0) informed[a] = informed[b] = true;
      if (r >= 1 && r <= 4) numa_uf.unite(a, b);
      if (r >= 1 && r <= 3) hb_uf.unite(a, b);
      if (r >= 1 && r <= 2) tree_uf.unite(a, b);
      if (r == 1) leaf_uf.unite(a, b);
    }
  }
  std::map<std::string, int> first_with_key;
  for (int d = 0; d < d_count; ++d) {
    const MatrixDevice& dev = m.devices[d];
    std::string key = numa_number(dev.numa_affinity) ? "numa:" + dev.numa_affinity
                      : !dev.cpu_affinity.empty()    ? "cpu:" + dev.cpu_affinity
                                                     : "";
    if (!key.empty()) {
      informed[d] = true;
      auto [it, fresh] = first_with_key.emplace(key, d);
      if (!fresh) numa_uf.unite(it->second, d);
    }
  }
  for (int d = 1; d < d_count; ++d) {
    if (!informed[d]) numa_uf.unite(0, d);
  }

  auto pcie_of = [&](int d) {
    return m.devices[d].kind == MatrixDevice::Kind::Gpu ? std::pair{spec.pcie_gen, spec.pcie_lanes}
                                                        : std::pair{spec.pcie_gen, host.nic_pcie_lanes};
  };
  auto attach = [&](int d, Vertex parent) {
    auto [gen, lanes] = pcie_of(d);
    topo.add_link(vtx[d], parent,
                  {LinkKind::Pcie, hw.pcie_bandwidth(gen, lanes), lat.pcie + lat.pcie_switch, lanes, gen});
  };
  auto uplink = [&](const std::vector<int>& members, Vertex child, Vertex parent) {
    int gen = 0;
    for (int d : members) gen = std::max(gen, pcie_of(d).first);
    topo.add_link(child, parent,
                  {LinkKind::Pcie, hw.pcie_bandwidth(gen, 16), lat.pcie + lat.pcie_switch, 16, gen});
  };

  std::vector<int> implied_leaf(d_count, -1), implied_tree(d_count, -1), implied_hb(d_count, -1),
      implied_numa(d_count, -1);
  std::vector<Vertex> cpus;
  int hb_count = 0, sw_count = 0;
  const auto domains = groups_of(numa_uf, all);
  for (std::size_t k = 0; k < domains.size(); ++k) {
    const auto& dom = domains[k];
    int numa_id = -1;  // unknown unless a device of the domain prints its NUMA affinity
    for (int d : dom) {
      if (auto v = numa_number(m.devices[d].numa_affinity)) {
        numa_id = *v;
        break;
      }
    }
    const Vertex cpu =
        topo.add_vertex({VertexKind::Cpu, opt.name_prefix + "cpu" + std::to_string(k), node, numa_id});
    for (const Vertex other : cpus) {
      topo.add_link(cpu, other, {LinkKind::Smp, host.smp_bandwidth, lat.smp, 0, 0});
    }
    cpus.push_back(cpu);
    for (int d : dom) {
      implied_numa[d] = static_cast<int>(k);
      if (m.devices[d].kind == MatrixDevice::Kind::Gpu) {
        gpu_info(d).numa = numa_id;
      } else {
        topo.nics[info.nics[d - g_count]].numa = numa_id;
      }
    }
    for (const auto& hb : groups_of(hb_uf, dom)) {
      const Vertex bridge = topo.add_vertex(
          {VertexKind::HostBridge, opt.name_prefix + "hostbridge" + std::to_string(hb_count), node, -1});
      for (int d : hb) implied_hb[d] = hb_count;
      ++hb_count;
      topo.add_link(bridge, cpu, {LinkKind::HostLink, host.root_complex_bandwidth, lat.host_bridge, 0, 0});
      for (const auto& tree : groups_of(tree_uf, hb)) {
        if (tree.size() == 1) {
          attach(tree[0], bridge);
          continue;
        }
        const auto leaves = groups_of(leaf_uf, tree);
        auto new_switch = [&]() {
          return topo.add_vertex(
              {VertexKind::PcieSwitch, opt.name_prefix + "pcisw" + std::to_string(sw_count++), node, -1});
        };
        const int tree_id = tree.front();
        for (int d : tree) implied_tree[d] = tree_id;
        if (leaves.size() == 1) {
          const Vertex sw = new_switch();
          uplink(tree, sw, bridge);
          for (int d : tree) {
            attach(d, sw);
            implied_leaf[d] = tree_id;
          }
          continue;
        }
        const Vertex parent = new_switch();
        uplink(tree, parent, bridge);
        for (const auto& leaf : leaves) {
          const Vertex sw = new_switch();
          uplink(leaf, sw, parent);
          for (int d : leaf) {
            attach(d, sw);
            implied_leaf[d] = leaf.front();
          }
        }
      }
    }
  }

  // 6. Check that the inferred tree reproduces the matrix's PCIe codes.
  int mismatches = 0;
  std::string example;
  for (int a = 0; a < d_count; ++a) {
    for (int b = a + 1; b < d_count; ++b) {
      const int r = rank(a, b);
      if (r == 0) continue;
      const int implied = implied_numa[a] != implied_numa[b]                          ? 5
                          : implied_hb[a] != implied_hb[b]                            ? 4
                          : implied_tree[a] < 0 || implied_tree[a] != implied_tree[b] ? 3
                          : implied_leaf[a] != implied_leaf[b]                        ? 2
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
    diag.warn(source + ": the inferred PCIe tree does not reproduce " + std::to_string(mismatches) +
              " matrix cell(s), e.g. " + example + "; the matrix is not a tree");
  }
  if (!m.devices.empty() && std::none_of(informed.begin(), informed.end(), [](bool x) { return x; })) {
    topo.notes.push_back(source + ": no PCIe or NUMA information; each device assumed on its own root port");
  }
  topo.nodes.push_back(std::move(info));
}

}  // namespace commsim::topo
