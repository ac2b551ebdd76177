// Rendering a Topology as text, JSON or Graphviz DOT.
#include "commsim/topo/render.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace commsim::topo {
namespace {

double round_to(double v, int digits) {
  const double f = std::pow(10.0, digits);
  return std::round(v * f) / f;
}

std::string gbps(double bytes_per_s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", bytes_per_s / 1e9);
  return buf;
}

std::string pad(const std::string& s, std::size_t w) {
  return s.size() >= w ? s : s + std::string(w - s.size(), ' ');
}

std::string link_label(const LinkInfo& l) {
  std::string s = kind_name(l.kind);
  if (l.kind == LinkKind::NvLink) s += " x" + std::to_string(l.width);
  if (l.kind == LinkKind::Pcie) s += " gen" + std::to_string(l.pcie_gen) + " x" + std::to_string(l.width);
  return s + " " + format_bandwidth(l.bandwidth);
}

/// Physical links: each pair of directed edges once (source index < target index).
template <typename F>
void for_each_link(const Topology& topo, F&& f) {
  const Graph& g = topo.graph();
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    const Vertex a = boost::source(*e, g), b = boost::target(*e, g);
    if (a < b) f(a, b, g[*e]);
  }
}

}  // namespace

std::vector<PathEntry> gpu_paths(const Topology& topo, bool from_first_machine) {
  std::vector<PathEntry> out;
  const std::size_t n = topo.gpus.size();
  // Machine 0's GPUs, or all, times the n - 1 destinations: linear in the cluster for the first machine only
  // (reserving for every pair of a 24,000-GPU cluster asked for 32 GB).
  const std::size_t sources =
      from_first_machine
          ? static_cast<std::size_t>(std::count_if(topo.gpus.begin(), topo.gpus.end(),
                                                   [](const GpuInfo& g) { return g.node == 0; }))
          : n;
  out.reserve(sources * (n > 0 ? n - 1 : 0));
  const Graph& g = topo.graph();
  for (const GpuInfo& a : topo.gpus) {
    if (from_first_machine && a.node != 0) continue;
    // One shortest-route tree per source serves every destination in its machine (a route per pair would
    // search the machine once per pair: cubic in a one-machine matrix of many GPUs).
    const RouteTree tree = topo.route_tree(a.vertex);
    for (const GpuInfo& b : topo.gpus) {
      if (a.index == b.index) continue;
      const Route r = b.node == a.node ? tree.to(g, b.vertex) : topo.route(a.vertex, b.vertex);
      out.push_back({a.index, b.index, topo.pair_code(a.index, b.index), r.edges.empty() ? 0.0 : r.bandwidth,
                     r.latency, static_cast<int>(r.edges.size())});
    }
  }
  return out;
}

nlohmann::json to_json(const Topology& topo, const Diagnostics& diag) {
  using nlohmann::json;
  json j;
  j["schema"] = "commsim.topology/1";
  j["name"] = topo.name;
  j["source"] = topo.source;
  j["nodes"] = json::array();
  for (std::size_t i = 0; i < topo.nodes.size(); ++i) {
    const NodeInfo& n = topo.nodes[i];
    j["nodes"].push_back({{"index", i},
                          {"name", n.name},
                          {"source", n.source},
                          {"gpu_model", n.gpu_model},
                          {"gpu_model_origin", n.gpu_origin},
                          {"nvlink_fabric", n.nvlink_fabric},
                          {"gpus", n.gpus},
                          {"nics", n.nics}});
  }
  j["gpus"] = json::array();
  for (const GpuInfo& g : topo.gpus) {
    j["gpus"].push_back({{"index", g.index},
                         {"name", g.name},
                         {"node", g.node},
                         {"local_index", g.local_index},
                         {"model", g.model},
                         {"numa", g.numa},
                         {"cpu_affinity", g.cpu_affinity},
                         {"nvlinks", g.nvlinks},
                         {"nvlink_bandwidth_gbps", round_to(g.nvlink_bandwidth / 1e9, 3)},
                         {"pcie_gen", g.pcie_gen},
                         {"pcie_lanes", g.pcie_lanes}});
  }
  j["nics"] = json::array();
  for (const NicInfo& n : topo.nics) {
    j["nics"].push_back({{"index", n.index},
                         {"name", n.name},
                         {"device", n.device},
                         {"node", n.node},
                         {"local_index", n.local_index},
                         {"numa", n.numa},
                         {"bandwidth_gbps", round_to(n.bandwidth / 1e9, 3)},
                         {"rail", n.rail}});
  }
  const Graph& g = topo.graph();
  j["switches"] = json::array();
  for (auto [v, end] = boost::vertices(g); v != end; ++v) {
    const VertexInfo& info = g[*v];
    if (info.kind == VertexKind::Gpu || info.kind == VertexKind::Nic) continue;
    json s = {{"name", info.name}, {"kind", kind_name(info.kind)}, {"node", info.node}};
    if (info.kind == VertexKind::Cpu) s["numa"] = info.index;
    j["switches"].push_back(s);
  }
  j["links"] = json::array();
  for_each_link(topo, [&](Vertex a, Vertex b, const LinkInfo& l) {
    j["links"].push_back({{"a", g[a].name},
                          {"b", g[b].name},
                          {"kind", kind_name(l.kind)},
                          {"width", l.width},
                          {"pcie_gen", l.pcie_gen},
                          {"bandwidth_gbps", round_to(l.bandwidth / 1e9, 3)},
                          {"latency_us", round_to(static_cast<double>(l.latency) / 1e6, 4)}});
  });
  j["paths"] = json::array();
  // Every ordered pair up to kAllPathsMaxGpus GPUs; beyond, the paths from the first machine's GPUs (a
  // cluster of identical machines has no other classes, and all pairs would be quadratic in size and time).
  const bool first_only = topo.gpus.size() > kAllPathsMaxGpus;
  j["paths_from"] = first_only ? "machine 0" : "every GPU";
  for (const PathEntry& p : gpu_paths(topo, first_only)) {
    j["paths"].push_back({{"src", p.src},
                          {"dst", p.dst},
                          {"type", p.type},
                          {"bandwidth_gbps", round_to(p.bandwidth / 1e9, 3)},
                          {"latency_us", round_to(static_cast<double>(p.latency) / 1e6, 4)},
                          {"hops", p.hops}});
  }
  if (topo.fabric) {
    const FabricInfo& f = *topo.fabric;
    j["fabric"] = {{"kind", kind_name(f.kind)},
                   {"link_bandwidth_gbps", round_to(f.link_bandwidth / 1e9, 3)},
                   {"hop_latency_us", round_to(static_cast<double>(f.hop_latency) / 1e6, 4)},
                   {"rails", f.rails},
                   {"nodes_per_leaf", f.nodes_per_leaf},
                   {"oversubscription", f.oversubscription},
                   {"leaves", f.leaves},
                   {"spine", f.spine}};
    if (f.nodes_per_pod > 0) {
      j["fabric"]["nodes_per_pod"] = f.nodes_per_pod;
      j["fabric"]["pods"] = f.pods;
      j["fabric"]["core_oversubscription"] = f.core_oversubscription;
    }
  } else {
    j["fabric"] = nullptr;
  }
  j["notes"] = topo.notes;
  j["warnings"] = diag.warnings();
  return j;
}

std::string to_text(const Topology& topo, const Diagnostics& diag) {
  std::ostringstream o;
  o << "Topology  " << topo.name << "  (" << topo.source << ")\n";
  o << "Machines  " << topo.nodes.size() << "   GPUs " << topo.gpus.size() << "   NICs " << topo.nics.size()
    << "\n";
  // Machines: identical ones are summarised on one line.
  std::map<std::string, int> kinds;
  std::vector<std::string> order;
  for (const NodeInfo& n : topo.nodes) {
    const std::string fabric = n.nvlink_fabric == "nvswitch" ? "NVLink through NVSwitch"
                               : n.nvlink_fabric == "direct" ? "direct NVLink bundles"
                                                             : "no NVLink";
    std::string line = std::to_string(n.gpus.size()) + "x " + n.gpu_model + ", " + fabric + ", " +
                       std::to_string(n.nics.size()) + (n.nics.size() == 1 ? " NIC" : " NICs") +
                       "\n      from " + n.source + "; GPU from " + n.gpu_origin;
    if (kinds[line]++ == 0) order.push_back(line);
  }
  for (const auto& line : order)
    o << "  " << kinds[line] << " machine" << (kinds[line] > 1 ? "s" : "") << " of " << line << "\n";
  if (topo.fabric) {
    const FabricInfo& f = *topo.fabric;
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%g:1", f.oversubscription);
    o << "Fabric    " << kind_name(f.kind) << ", " << format_bandwidth(f.link_bandwidth) << " ports, "
      << f.rails << " rail(s), " << f.nodes_per_leaf << " nodes per leaf, " << f.leaves << " leaves"
      << (f.spine ? ", spine at " + std::string(ratio) + " oversubscription" : ", no spine");
    if (f.nodes_per_pod > 0) {
      char core[32];
      std::snprintf(core, sizeof core, "%g:1", f.core_oversubscription);
      o << ", " << f.pods << " pod(s) of " << f.nodes_per_pod << " nodes"
        << (f.core ? ", core at " + std::string(core) + " oversubscription" : ", no core");
    }
    o << ", hop latency " << format_duration(f.hop_latency) << "\n";
  }

  // GPUs of the first machine (all machines of a cluster look alike in most what-ifs).
  const bool many = topo.nodes.size() > 1;
  o << "\nGPUs" << (many ? " of " + topo.nodes[0].name : std::string()) << "\n";
  o << "  " << pad("gpu", 10) << pad("model", 8) << pad("numa", 6) << pad("cpu affinity", 18)
    << pad("pcie", 11) << "nvlink\n";
  for (const GpuInfo& g : topo.gpus) {
    if (g.node != 0) break;
    const std::string nv = g.nvlinks > 0
                               ? std::to_string(g.nvlinks) + " links, " + format_bandwidth(g.nvlink_bandwidth)
                               : std::string("none");
    o << "  " << pad(g.name, 10) << pad(g.model, 8) << pad(g.numa >= 0 ? std::to_string(g.numa) : "-", 6)
      << pad(g.cpu_affinity.empty() ? "-" : g.cpu_affinity, 18)
      << pad("gen" + std::to_string(g.pcie_gen) + " x" + std::to_string(g.pcie_lanes), 11) << nv << "\n";
  }
  if (!topo.nics.empty()) {
    o << "\nNICs" << (many ? " of " + topo.nodes[0].name : std::string()) << "\n";
    o << "  " << pad("nic", 12) << pad("device", 10) << pad("numa", 6) << pad("bandwidth", 12) << "rail\n";
    for (const NicInfo& n : topo.nics) {
      if (n.node != 0) break;
      o << "  " << pad(n.name, 12) << pad(n.device, 10) << pad(n.numa >= 0 ? std::to_string(n.numa) : "-", 6)
        << pad(format_bandwidth(n.bandwidth), 12) << (n.rail >= 0 ? std::to_string(n.rail) : "-") << "\n";
    }
  }

  // Inferred switches of machine 0, with what hangs off them.
  const Graph& g = topo.graph();
  o << "\nInferred switches and hosts" << (many ? " of " + topo.nodes[0].name : std::string()) << "\n";
  for (auto [v, end] = boost::vertices(g); v != end; ++v) {
    const VertexInfo& info = g[*v];
    if (info.kind == VertexKind::Gpu || info.kind == VertexKind::Nic || info.kind == VertexKind::NetSwitch)
      continue;
    if (info.node != 0) continue;
    std::vector<std::string> peers;
    for (auto [e, eend] = boost::out_edges(*v, g); e != eend; ++e) {
      const Vertex t = boost::target(*e, g);
      peers.push_back(g[t].name + " (" + link_label(g[*e]) + ")");
    }
    o << "  " << pad(info.name, 16) << pad(kind_name(info.kind), 12);
    for (std::size_t i = 0; i < peers.size(); ++i) o << (i ? ", " : "") << peers[i];
    o << "\n";
  }

  // Path matrix: machine 0's GPUs, plus the classes of its paths to other machines.
  const auto paths = gpu_paths(topo, true);
  std::vector<int> local;
  for (const GpuInfo& gi : topo.gpus) {
    if (gi.node == 0) local.push_back(gi.index);
  }
  const std::size_t n = topo.gpus.size();
  auto at = [&](int s, int d) -> const PathEntry& {  // machine 0's GPUs are the first, in index order
    const std::size_t idx =
        static_cast<std::size_t>(s) * (n - 1) + static_cast<std::size_t>(d) - (d > s ? 1 : 0);
    return paths[idx];
  };
  o << "\nGPU paths" << (many ? " within " + topo.nodes[0].name : std::string())
    << ": connection code and peak per-direction bandwidth (GB/s)\n";
  std::size_t w = 12;
  for (int d : local) w = std::max(w, topo.gpus[d].name.size() + 2);
  o << "  " << pad("", w);
  for (int d : local) o << pad(topo.gpus[d].name, w);
  o << "\n";
  for (int s : local) {
    o << "  " << pad(topo.gpus[s].name, w);
    for (int d : local) {
      o << pad(s == d ? "X" : at(s, d).type + " " + gbps(at(s, d).bandwidth), w);
    }
    o << "\n";
  }
  if (many) {
    std::map<std::pair<std::string, long long>, std::pair<int, Picoseconds>> classes;
    std::size_t net_pairs = 0;
    for (const PathEntry& p : paths) {
      if (p.type != "NET") continue;
      ++net_pairs;
      auto& c = classes[{p.type, std::llround(p.bandwidth / 1e6)}];
      c.first++;
      c.second = std::max(c.second, p.latency);
    }
    o << "\nPaths from " << topo.nodes[0].name << " to other machines: " << net_pairs
      << " ordered GPU pairs, by peak per-direction bandwidth\n";
    for (const auto& [key, val] : classes) {
      o << "  NET  " << pad(gbps(static_cast<double>(key.second) * 1e6) + " GB/s", 14)
        << pad(std::to_string(val.first) + " pairs", 14) << "max latency " << format_duration(val.second)
        << "\n";
    }
  }
  if (!topo.notes.empty()) {
    o << "\nNotes\n";
    for (const auto& note : topo.notes) o << "  - " << note << "\n";
  }
  if (!diag.warnings().empty()) {
    o << "\nWarnings\n";
    for (const auto& wmsg : diag.warnings()) o << "  - " << wmsg << "\n";
  }
  return o.str();
}

std::string to_dot(const Topology& topo) {
  std::ostringstream o;
  const Graph& g = topo.graph();
  auto quote = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') q += '\\';
      q += c;
    }
    return q + "\"";
  };
  o << "graph " << quote(topo.name) << " {\n  graph [rankdir=TB, fontname=\"Helvetica\"];\n"
    << "  node [fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=8];\n";
  std::map<int, std::vector<Vertex>> by_node;
  for (auto [v, end] = boost::vertices(g); v != end; ++v) by_node[g[*v].node].push_back(*v);
  for (const auto& [node, vs] : by_node) {
    const std::string indent = node >= 0 ? "    " : "  ";
    if (node >= 0) {
      o << "  subgraph " << quote("cluster_" + std::to_string(node))
        << " {\n    label=" << quote(topo.nodes[node].name + " (" + topo.nodes[node].gpu_model + ")")
        << ";\n";
    }
    for (Vertex v : vs) {
      const VertexInfo& info = g[v];
      const char* shape = "box";
      const char* color = "white";
      switch (info.kind) {
        case VertexKind::Gpu:
          shape = "box";
          color = "palegreen";
          break;
        case VertexKind::Nic:
          shape = "box";
          color = "lightblue";
          break;
        case VertexKind::NvSwitch:
          shape = "hexagon";
          color = "gold";
          break;
        case VertexKind::PcieSwitch:
          shape = "ellipse";
          color = "lightgrey";
          break;
        case VertexKind::HostBridge:
          shape = "ellipse";
          color = "white";
          break;
        case VertexKind::Cpu:
          shape = "octagon";
          color = "salmon";
          break;
        case VertexKind::NetSwitch:
          shape = "diamond";
          color = "lightcyan";
          break;
      }
      o << indent << quote(info.name) << " [shape=" << shape << ", style=filled, fillcolor=" << color
        << "];\n";
    }
    if (node >= 0) o << "  }\n";
  }
  for_each_link(topo, [&](Vertex a, Vertex b, const LinkInfo& l) {
    o << "  " << quote(g[a].name) << " -- " << quote(g[b].name) << " [label=" << quote(link_label(l))
      << "];\n";
  });
  o << "}\n";
  return o.str();
}

}  // namespace commsim::topo
