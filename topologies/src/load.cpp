// Format detection, bundled presets and the what-if TOML cluster format.
#include "commsim/topo/load.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>

#include "commsim/core/error.hpp"
#include "commsim/core/text.hpp"
#include "commsim/core/toml_fields.hpp"
#include "commsim/topo/nvlink_status.hpp"
#include "commsim/topo/topo_matrix.hpp"

namespace commsim::topo {

std::span<const EmbeddedFile> embedded_library();  // generated from topologies/library

namespace {

namespace fs = std::filesystem;
using commsim::TomlFields;

/// The `nvidia-smi nvlink -s` capture beside a topology file: NAME.nvlink, or nvlink.txt beside topo.txt (the
/// layout commsim-measure writes into every output folder). Empty when there is none.
std::string sibling_nvlink(const std::string& path) {
  fs::path p(path);
  std::error_code ec;
  if (p.filename() == "topo.txt") {
    const fs::path measured = p.parent_path() / "nvlink.txt";
    if (fs::is_regular_file(measured, ec)) return measured.string();
  }
  p.replace_extension(".nvlink");
  return fs::is_regular_file(p, ec) ? p.string() : std::string();
}

double parse_ratio(const TomlFields& f, std::string_view key) {
  const toml::node* n = f.table().get(key);
  if (!n) return 1.0;
  double value = 0;
  if (n->is_integer() || n->is_floating_point()) {
    value = n->value<double>().value_or(0);
  } else if (n->is_string()) {
    const std::string s(*n->value<std::string_view>());
    // Exactly two numbers around one colon: "2:1:1" or "2:1x" is refused, not read as 2:1.
    auto number = [&](const std::string& part) {
      const char* begin = part.c_str();
      char* end = nullptr;
      const double v = part.empty() || std::isspace(static_cast<unsigned char>(part.front()))
                           ? std::nan("")
                           : std::strtod(begin, &end);
      if (end != begin + part.size() || !std::isfinite(v)) {
        f.fail(key, "expected a ratio of two numbers such as \"2:1\", found \"" + s + "\"");
      }
      return v;
    };
    const auto colon = s.find(':');
    if (colon == std::string::npos) f.fail(key, "expected a ratio such as \"2:1\" or a number");
    const double a = number(s.substr(0, colon));
    const double b = number(s.substr(colon + 1));
    value = b > 0 ? a / b : 0;
  } else {
    f.fail(key, "expected a ratio such as \"2:1\" or a number");
  }
  if (!(value >= 1.0) || !std::isfinite(value) || value > 1000) {
    f.fail(key, "oversubscription must be at least 1:1 (downlink:uplink) and at most 1000:1");
  }
  return value;
}

void add_fabric(Topology& topo, const TomlFields& f, const models::HardwareCatalog& hw) {
  f.reject_unknown_keys({"kind", "link_bandwidth", "hop_latency", "rails", "nodes_per_leaf",
                         "oversubscription", "nodes_per_pod", "core_oversubscription"});
  FabricInfo fab;
  const std::string kind = f.required_string("kind");
  try {
    fab.hop_latency = f.duration("hop_latency").value_or(hw.fabric_hop_latency(kind));
    fab.kind = parse_fabric_kind(kind);
  } catch (const ValueError& e) {
    f.fail("kind", e.what());
  } catch (const UsageError& e) {
    f.fail("kind", e.what());
  }
  int max_nics = 0, min_nics = 1 << 30;
  double nic_bw = 0;
  for (const NodeInfo& n : topo.nodes) {
    max_nics = std::max(max_nics, static_cast<int>(n.nics.size()));
    min_nics = std::min(min_nics, static_cast<int>(n.nics.size()));
  }
  for (const NicInfo& n : topo.nics) nic_bw = std::max(nic_bw, n.bandwidth);
  if (min_nics == 0) {
    f.fail("",
           "every machine on a fabric needs at least one NIC; a node source has none (add NIC columns to "
           "its topo file or choose a preset with NICs)");
  }
  fab.link_bandwidth = f.bandwidth("link_bandwidth").value_or(nic_bw);
  // Range-checked as read (64-bit), before narrowing: 2^32 + 1 rails is not 1.
  const std::int64_t rails = f.integer("rails").value_or(max_nics);
  if (rails < 1 || rails > max_nics) f.fail("rails", "must be between 1 and the NICs per node");
  fab.rails = static_cast<int>(rails);
  const int nodes = static_cast<int>(topo.nodes.size());
  const std::int64_t nodes_per_leaf = f.integer("nodes_per_leaf").value_or(nodes);
  if (nodes_per_leaf < 1 || nodes_per_leaf > 100000) f.fail("nodes_per_leaf", "must be between 1 and 100000");
  fab.nodes_per_leaf = static_cast<int>(nodes_per_leaf);
  fab.oversubscription = parse_ratio(f, "oversubscription");
  const int leaves_per_rail = (nodes + fab.nodes_per_leaf - 1) / fab.nodes_per_leaf;
  fab.leaves = leaves_per_rail * fab.rails;
  fab.spine = fab.leaves > 1;

  std::vector<Vertex> leaf(fab.leaves);
  std::vector<int> downlinks(fab.leaves, 0);
  for (int r = 0; r < fab.rails; ++r) {
    for (int i = 0; i < leaves_per_rail; ++i) {
      leaf[r * leaves_per_rail + i] = topo.add_vertex(
          {VertexKind::NetSwitch, "leaf.r" + std::to_string(r) + "." + std::to_string(i), -1, -1});
    }
  }
  for (int n = 0; n < nodes; ++n) {
    const NodeInfo& node = topo.nodes[n];
    for (std::size_t k = 0; k < node.nics.size(); ++k) {
      NicInfo& nic = topo.nics[node.nics[k]];
      nic.rail = static_cast<int>(k) % fab.rails;
      const int l = nic.rail * leaves_per_rail + n / fab.nodes_per_leaf;
      ++downlinks[l];
      topo.add_link(nic.vertex, leaf[l],
                    {LinkKind::Network, std::min(nic.bandwidth, fab.link_bandwidth), fab.hop_latency, 1, 0});
    }
  }
  // Three tiers: leaves go up to their pod's spine; pod spines go up to the core at core_oversubscription.
  if (const auto per_pod = f.integer("nodes_per_pod")) {
    fab.nodes_per_pod = static_cast<int>(*per_pod);
    if (fab.nodes_per_pod < fab.nodes_per_leaf || fab.nodes_per_pod % fab.nodes_per_leaf != 0 ||
        fab.nodes_per_pod > 1000000) {
      f.fail("nodes_per_pod",
             "must be a whole multiple of nodes_per_leaf (" + std::to_string(fab.nodes_per_leaf) + ")");
    }
    fab.core_oversubscription = parse_ratio(f, "core_oversubscription");
  } else if (f.table().get("core_oversubscription")) {
    f.fail("core_oversubscription", "needs nodes_per_pod (a core tier exists only above pods)");
  }
  if (fab.spine) {
    const double leaf_up = fab.link_bandwidth / fab.oversubscription;  // per downlink
    if (fab.nodes_per_pod == 0) {
      const Vertex spine = topo.add_vertex({VertexKind::NetSwitch, "spine", -1, -1});
      for (int l = 0; l < fab.leaves; ++l) {
        if (downlinks[l] > 0)
          topo.add_link(leaf[l], spine,
                        {LinkKind::Network, downlinks[l] * leaf_up, fab.hop_latency, downlinks[l], 0});
      }
    } else {
      fab.pods = (nodes + fab.nodes_per_pod - 1) / fab.nodes_per_pod;
      std::vector<Vertex> pod_spine(fab.pods);
      std::vector<int> pod_downlinks(fab.pods, 0);
      for (int p = 0; p < fab.pods; ++p)
        pod_spine[p] = topo.add_vertex({VertexKind::NetSwitch, "spine.p" + std::to_string(p), -1, -1});
      const int leaves_per_pod = fab.nodes_per_pod / fab.nodes_per_leaf;
      for (int r = 0; r < fab.rails; ++r) {
        for (int i = 0; i < leaves_per_rail; ++i) {
          const int l = r * leaves_per_rail + i;
          if (downlinks[l] == 0) continue;
          const int p = i / leaves_per_pod;
          pod_downlinks[p] += downlinks[l];
          topo.add_link(leaf[l], pod_spine[p],
                        {LinkKind::Network, downlinks[l] * leaf_up, fab.hop_latency, downlinks[l], 0});
        }
      }
      fab.core = fab.pods > 1;
      if (fab.core) {
        const Vertex core = topo.add_vertex({VertexKind::NetSwitch, "core", -1, -1});
        for (int p = 0; p < fab.pods; ++p) {
          topo.add_link(pod_spine[p], core,
                        {LinkKind::Network, pod_downlinks[p] * leaf_up / fab.core_oversubscription,
                         fab.hop_latency, pod_downlinks[p], 0});
        }
      }
    }
  }
  topo.fabric = fab;
}

}  // namespace

std::string_view library_file(std::string_view path) {
  for (const auto& f : embedded_library()) {
    if (f.path == path) return f.contents;
  }
  throw Error("bundled file topologies/library/" + std::string(path) + " is missing from this build");
}

const std::vector<Preset>& presets() {
  static const std::vector<Preset> list = [] {
    const std::string file = "topologies/library/presets.toml";
    const toml::table root = parse_toml(library_file("presets.toml"), file);
    std::vector<Preset> out;
    for (const auto& [k, v] : root) {
      if (!v.is_table())
        throw InputError({file, 0, 0}, "preset '" + std::string(k.str()) + "' is not a table");
      TomlFields f(*v.as_table(), file, "preset " + std::string(k.str()));
      f.reject_unknown_keys({"description", "gpu", "topo", "nvlink"});
      out.push_back({std::string(k.str()), f.string("description").value_or(""), f.required_string("gpu"),
                     f.required_string("topo"), f.string("nvlink").value_or("")});
    }
    return out;
  }();
  return list;
}

Topology load_whatif(std::string_view text, const std::string& file, const std::string& base_dir,
                     const LoadOptions& options, Diagnostics& diag, const models::HardwareCatalog& hw) {
  require_text(text, file, "a TOML what-if topology");
  const toml::table root = parse_toml(text, file);
  TomlFields top(root, file, "");
  top.reject_unknown_keys({"name", "description", "nodes", "fabric"});
  Topology topo;
  topo.source = file;
  topo.name = top.string("name").value_or(fs::path(file).stem().string());

  const toml::array* nodes = root["nodes"].as_array();
  if (!nodes || nodes->empty())
    top.fail("nodes", "missing [[nodes]]: a what-if needs at least one node group");
  struct Source {
    TopoMatrix matrix;
    std::unique_ptr<NvlinkStatus> nvlink;
  };
  std::map<std::string, std::shared_ptr<Source>> cache;
  int total_nodes = 0;
  for (const auto& entry : *nodes) {
    if (!entry.is_table()) top.fail("nodes", "each [[nodes]] entry must be a table");
    TomlFields f(*entry.as_table(), file, "[[nodes]]");
    f.reject_unknown_keys({"count", "preset", "topo_file", "nvlink_file", "gpu", "overrides"});
    const std::int64_t count = f.integer("count").value_or(1);
    if (count < 1 || count > 100000) f.fail("count", "must be between 1 and 100000");
    const auto preset_name = f.string("preset");
    const auto topo_file = f.string("topo_file");
    if (preset_name.has_value() == topo_file.has_value()) {
      f.fail(preset_name ? "topo_file" : "", "give exactly one of preset = \"NAME\" or topo_file = \"PATH\"");
    }
    std::string gpu = options.gpu.empty() ? f.string("gpu").value_or("") : options.gpu;
    std::string origin = options.gpu.empty() ? "what-if file" : "--gpu";
    std::string key, source_name, matrix_text, matrix_file, nvlink_text, nvlink_file;
    if (preset_name) {
      auto it = std::find_if(presets().begin(), presets().end(),
                             [&](const Preset& p) { return p.name == *preset_name; });
      if (it == presets().end()) {
        std::string names;
        for (const Preset& p : presets()) names += (names.empty() ? "" : ", ") + p.name;
        f.fail("preset", "unknown preset '" + *preset_name + "'; known presets: " + names);
      }
      if (gpu.empty()) {
        gpu = it->gpu;
        origin = "preset " + it->name;
      }
      key = "preset:" + it->name;
      source_name = "preset " + it->name;
      matrix_text = std::string(library_file(it->topo_path));
      matrix_file = "topologies/library/" + it->topo_path;
      if (!it->nvlink_path.empty()) {
        nvlink_text = std::string(library_file(it->nvlink_path));
        nvlink_file = "topologies/library/" + it->nvlink_path;
      }
    } else {
      fs::path p(*topo_file);
      if (p.is_relative()) p = fs::path(base_dir) / p;
      key = source_name = matrix_file = p.string();
      try {
        matrix_text = read_file(matrix_file);
      } catch (const IoError& e) {
        f.fail("topo_file", e.what());
      }
      std::string nv = f.string("nvlink_file").value_or("");
      if (!nv.empty()) {
        fs::path q(nv);
        if (q.is_relative()) q = fs::path(base_dir) / q;
        nvlink_file = q.string();
      } else {
        nvlink_file = sibling_nvlink(matrix_file);
      }
      if (!nvlink_file.empty()) {
        try {
          nvlink_text = read_file(nvlink_file);
        } catch (const IoError& e) {
          f.fail("nvlink_file", e.what());
        }
      }
    }
    std::shared_ptr<Source>& src = cache[key + "|" + nvlink_file];
    if (!src) {
      src = std::make_shared<Source>();
      src->matrix = parse_topo_matrix(matrix_text, matrix_file);
      if (!nvlink_text.empty()) {
        src->nvlink = std::make_unique<NvlinkStatus>(parse_nvlink_status(nvlink_text, nvlink_file));
      }
    }
    NodeBuildOptions nb;
    nb.gpu = gpu;
    nb.gpu_origin = origin;
    nb.nvlink = src->nvlink.get();
    nb.source = source_name;
    if (const toml::table* o = f.subtable("overrides")) {
      TomlFields of(*o, file, "[nodes.overrides]");
      of.reject_unknown_keys({"nvlink_links", "nvlink_link_bandwidth", "pcie_gen", "pcie_lanes",
                              "nic_bandwidth", "nics", "use_nics"});
      if (auto v = of.integer("nvlink_links")) {
        if (*v < 0 || *v > 64) of.fail("nvlink_links", "must be between 0 and 64");
        nb.overrides.nvlink_links = static_cast<int>(*v);
      }
      nb.overrides.nvlink_link_bandwidth = of.bandwidth("nvlink_link_bandwidth");
      if (auto v = of.integer("pcie_gen")) {
        if (*v < 1 || *v > 64)
          of.fail("pcie_gen", "PCIe generation " + std::to_string(*v) + " does not exist");
        try {
          hw.pcie_bandwidth(static_cast<int>(*v), 16);
        } catch (const ValueError& e) {
          of.fail("pcie_gen", e.what());
        }
        nb.overrides.pcie_gen = static_cast<int>(*v);
      }
      if (auto v = of.integer("pcie_lanes")) {
        if (*v != 1 && *v != 2 && *v != 4 && *v != 8 && *v != 16)
          of.fail("pcie_lanes", "must be 1, 2, 4, 8 or 16");
        nb.overrides.pcie_lanes = static_cast<int>(*v);
      }
      nb.overrides.nic_bandwidth = of.bandwidth("nic_bandwidth");
      if (auto v = of.integer("nics")) {
        if (*v < 0 || *v > 64) of.fail("nics", "must be between 0 and 64");
        nb.overrides.nics = static_cast<int>(*v);
      }
      if (of.has("use_nics")) {
        // Which of the machine's NICs are cabled: where each sits (PCIe switch, socket) is the matrix's.
        if (of.has("nics"))
          of.fail("use_nics", "give either nics = N (the first N) or use_nics = [...], not both");
        const toml::array* list = o->get("use_nics")->as_array();
        const int available = static_cast<int>(src->matrix.devices.size()) - src->matrix.gpu_count();
        if (!list) of.fail("use_nics", "must be a list of NIC indices, e.g. [0, 2, 4, 6]");
        std::vector<int> use;
        for (const toml::node& item : *list) {
          const auto k = item.value<std::int64_t>();
          if (!k || !item.is_integer() || *k < 0 || *k >= available) {
            of.fail("use_nics", "NIC indices run from 0 to " + std::to_string(available - 1) + " (" +
                                    std::to_string(available) + " NIC(s) in " + source_name + ")");
          }
          if (std::find(use.begin(), use.end(), static_cast<int>(*k)) != use.end())
            of.fail("use_nics", "NIC " + std::to_string(*k) + " is listed twice");
          use.push_back(static_cast<int>(*k));
        }
        nb.overrides.use_nics = std::move(use);
      }
    }
    if (!gpu.empty() && !hw.find_gpu(gpu))
      f.fail("gpu", "unknown GPU '" + gpu + "'; known GPUs: " + hw.gpu_names());
    for (std::int64_t i = 0; i < count; ++i) {
      total_nodes++;
      if (total_nodes > 100000) f.fail("count", "more than 100000 nodes in total");
      nb.name_prefix = "n";  // appended, not "n" + ...: GCC 12 warns -Wrestrict on that once inlined here
      nb.name_prefix += std::to_string(topo.nodes.size());
      nb.name_prefix += '/';
      add_matrix_node(topo, src->matrix, nb, hw, diag);
    }
  }
  const toml::table* fabric = top.subtable("fabric");
  if (fabric) {
    add_fabric(topo, TomlFields(*fabric, file, "[fabric]"), hw);
  } else if (topo.nodes.size() > 1) {
    top.fail("", std::to_string(topo.nodes.size()) + " nodes but no [fabric] table to connect them");
  }
  if (topo.nodes.size() == 1) {
    // A single machine keeps the names nvidia-smi uses.
    topo.nodes[0].name = "node0";
  }
  return topo;
}

std::vector<TopologyInput> topology_inputs(const std::string& path) {
  std::vector<TopologyInput> out;
  const fs::path p(path);
  if (p.extension() != ".toml") {
    if (const std::string nv = sibling_nvlink(path); !nv.empty()) {
      out.push_back({fs::path(nv).filename() == "nvlink.txt" ? "its nvlink.txt" : "its .nvlink file", nv});
    }
    return out;
  }
  toml::table root;
  try {
    root = parse_toml(read_file(path), path);
  } catch (const Error&) {
    return out;  // loading reports why
  }
  const toml::array* nodes = root["nodes"].as_array();
  if (!nodes) return out;
  const fs::path base = p.parent_path();
  auto resolve = [&](std::string_view name) {
    fs::path q(name);
    return (q.is_relative() ? base / q : q).string();
  };
  int k = 0;
  for (const auto& entry : *nodes) {
    ++k;
    const toml::table* t = entry.as_table();
    if (!t) continue;
    std::string where = " of [[nodes]] ";  // (appended: see name_prefix above)
    where += std::to_string(k);
    if (const auto topo_file = (*t)["topo_file"].value<std::string>()) {
      const std::string matrix = resolve(*topo_file);
      out.push_back({"topo_file" + where, matrix});
      if (const auto nv = (*t)["nvlink_file"].value<std::string>()) {
        out.push_back({"nvlink_file" + where, resolve(*nv)});
      } else if (const std::string sib = sibling_nvlink(matrix); !sib.empty()) {
        out.push_back({"the nvlink capture beside topo_file" + where, sib});
      }
    }
  }
  return out;
}

Topology load_topology(const std::string& path, const LoadOptions& options, Diagnostics& diag,
                       const models::HardwareCatalog& hw) {
  const std::string text = read_file(path);
  const fs::path p(path);
  if (p.extension() == ".toml") {
    return load_whatif(text, path, p.parent_path().string(), options, diag, hw);
  }
  require_text(text, path, "`nvidia-smi topo -m` output or a what-if .toml file");
  if (!looks_like_topo_matrix(text)) {
    if (text.find("[[nodes]]") != std::string::npos) {
      throw InputError({path, 1, 1}, "this looks like a what-if TOML file; name it with a .toml extension");
    }
  }
  const TopoMatrix m = parse_topo_matrix(text, path);
  std::unique_ptr<NvlinkStatus> nvlink;
  const std::string nv = options.nvlink_file.empty() ? sibling_nvlink(path) : options.nvlink_file;
  if (!nv.empty()) nvlink = std::make_unique<NvlinkStatus>(parse_nvlink_status(read_file(nv), nv));
  Topology topo;
  topo.source = path;
  topo.name = p.stem().string();
  NodeBuildOptions nb;
  nb.gpu = options.gpu;
  nb.nvlink = nvlink.get();
  nb.source = path;
  add_matrix_node(topo, m, nb, hw, diag);
  return topo;
}

}  // namespace commsim::topo
