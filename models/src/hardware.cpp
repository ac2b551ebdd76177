// Loading and querying the hardware catalogue (models/params/hardware.toml, embedded at build time).
#include "commsim/models/hardware.hpp"

#include <algorithm>
#include <cctype>

#include "commsim/core/embedded.hpp"
#include "commsim/core/error.hpp"
#include "commsim/core/toml_fields.hpp"

namespace commsim::models {

std::span<const EmbeddedFile> embedded_params();  // generated from models/params/*.toml

namespace {

std::string normalize(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == ' ' || c == '-' || c == '_') continue;
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  for (std::string_view prefix : {"NVIDIA", "TESLA"}) {
    if (out.rfind(prefix, 0) == 0) out.erase(0, prefix.size());
  }
  return out;
}

GpuSpec parse_gpu(const std::string& name, const toml::table& t, const std::string& file) {
  TomlFields f(t, file, "gpu." + name);
  f.reject_unknown_keys({"description", "aliases", "release", "sm", "nvlink_generation", "nvlink_links",
                         "nvlink_link_bandwidth", "nvlink_signaling_rate", "nvswitch", "pcie_gen",
                         "pcie_lanes", "nic_bandwidth"});
  GpuSpec g;
  g.name = name;
  g.description = f.string("description").value_or(name);
  if (const toml::array* a = t["aliases"].as_array()) {
    for (const auto& v : *a) {
      if (!v.is_string()) f.fail("aliases", "expected an array of strings");
      g.aliases.emplace_back(*v.value<std::string_view>());
    }
  }
  g.release_year = static_cast<int>(f.required_integer("release"));
  g.sm = static_cast<int>(f.required_integer("sm"));
  g.nvlink_generation = static_cast<int>(f.integer("nvlink_generation").value_or(0));
  g.nvlink_links = static_cast<int>(f.required_integer("nvlink_links"));
  if (g.nvlink_links < 0 || g.nvlink_links > 64) f.fail("nvlink_links", "must be between 0 and 64");
  if (g.nvlink_links > 0) {
    g.nvlink_link_bandwidth = f.required_bandwidth("nvlink_link_bandwidth");
    g.nvlink_signaling_rate = f.bandwidth("nvlink_signaling_rate").value_or(g.nvlink_link_bandwidth);
  }
  g.nvswitch = f.boolean("nvswitch").value_or(false);
  g.pcie_gen = static_cast<int>(f.required_integer("pcie_gen"));
  g.pcie_lanes = static_cast<int>(f.integer("pcie_lanes").value_or(16));
  g.nic_bandwidth = f.required_bandwidth("nic_bandwidth");
  return g;
}

}  // namespace

const HardwareCatalog& HardwareCatalog::builtin() {
  static const HardwareCatalog catalog = [] {
    for (const auto& f : embedded_params()) {
      if (f.path == "hardware.toml") return parse(f.contents, "models/params/hardware.toml");
    }
    throw Error("models/params/hardware.toml was not embedded in this build");
  }();
  return catalog;
}

HardwareCatalog HardwareCatalog::parse(std::string_view toml_text, const std::string& file) {
  const toml::table root = parse_toml(toml_text, file);
  TomlFields top(root, file, "");
  HardwareCatalog c;

  const toml::table* pcie = top.subtable("pcie");
  if (!pcie) top.fail("pcie", "missing [pcie] table");
  TomlFields pf(*pcie, file, "pcie");
  for (const auto& [k, v] : *pcie) {
    const std::string key(k.str());
    if (key.rfind("gen", 0) != 0 || key.size() < 4 || key.size() > 5 ||
        !std::all_of(key.begin() + 3, key.end(),
                     [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); })) {
      pf.fail(key, "keys of [pcie] are gen1 .. gen6");
    }
    c.pcie_x16_[std::stoi(key.substr(3))] = pf.required_bandwidth(key);
  }

  if (const toml::table* lat = top.subtable("latency")) {
    TomlFields lf(*lat, file, "latency");
    lf.reject_unknown_keys({"nvlink", "nvswitch", "pcie", "pcie_switch", "host_bridge", "smp"});
    c.latency_.nvlink = lf.duration("nvlink").value_or(0);
    c.latency_.nvswitch = lf.duration("nvswitch").value_or(0);
    c.latency_.pcie = lf.duration("pcie").value_or(0);
    c.latency_.pcie_switch = lf.duration("pcie_switch").value_or(0);
    c.latency_.host_bridge = lf.duration("host_bridge").value_or(0);
    c.latency_.smp = lf.duration("smp").value_or(0);
  }
  const toml::table* host = top.subtable("host");
  if (!host) top.fail("host", "missing [host] table");
  TomlFields hf(*host, file, "host");
  hf.reject_unknown_keys({"root_complex_bandwidth", "smp_bandwidth", "nic_pcie_lanes"});
  c.host_.root_complex_bandwidth = hf.required_bandwidth("root_complex_bandwidth");
  c.host_.smp_bandwidth = hf.required_bandwidth("smp_bandwidth");
  c.host_.nic_pcie_lanes = static_cast<int>(hf.integer("nic_pcie_lanes").value_or(16));

  if (const toml::table* fabric = top.subtable("fabric")) {
    for (const auto& [k, v] : *fabric) {
      if (!v.is_table()) TomlFields(*fabric, file, "fabric").fail(k.str(), "expected a table");
      TomlFields ff(*v.as_table(), file, "fabric." + std::string(k.str()));
      ff.reject_unknown_keys({"hop_latency"});
      auto hop = ff.duration("hop_latency");
      if (!hop) ff.fail("hop_latency", "missing required key");
      c.fabric_hop_latency_[std::string(k.str())] = *hop;
    }
  }

  const toml::table* gpus = top.subtable("gpu");
  if (!gpus || gpus->empty()) top.fail("gpu", "no [gpu.NAME] tables");
  for (const auto& [k, v] : *gpus) {
    if (!v.is_table()) TomlFields(*gpus, file, "gpu").fail(k.str(), "expected a table");
    GpuSpec g = parse_gpu(std::string(k.str()), *v.as_table(), file);
    if (c.pcie_x16_.count(g.pcie_gen) == 0) {
      TomlFields(*v.as_table(), file, "gpu." + g.name)
          .fail("pcie_gen", "no [pcie] entry for this generation");
    }
    std::vector<std::string> names{normalize(g.name)};
    for (const auto& a : g.aliases) names.push_back(normalize(a));
    c.gpu_names_.push_back(std::move(names));
    c.gpus_.push_back(std::move(g));
  }
  return c;
}

const GpuSpec* HardwareCatalog::find_gpu(std::string_view name) const {
  const std::string want = normalize(name);
  if (want.empty()) return nullptr;
  // Exact match on a name or alias first, then the longest known name that prefixes the query.
  const GpuSpec* best = nullptr;
  std::size_t best_len = 0;
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    for (const auto& n : gpu_names_[i]) {
      if (n == want) return &gpus_[i];
      if (want.rfind(n, 0) == 0 && n.size() > best_len) {
        best = &gpus_[i];
        best_len = n.size();
      }
    }
  }
  return best;
}

bool HardwareCatalog::same_gpu(std::string_view device_name, std::string_view model) const {
  const GpuSpec* measured = find_gpu(device_name);
  const GpuSpec* topology = find_gpu(model);
  if (measured && topology) {
    const std::string d = normalize(device_name), m = normalize(topology->name);
    for (std::string_view form : {"NVL", "PCIE"}) {
      if ((d.find(form) != std::string::npos) != (m.find(form) != std::string::npos)) return false;
    }
    return measured == topology;
  }
  const auto at = device_name.find(model);
  const auto boundary = [&](std::size_t i) {
    return i >= device_name.size() || std::isspace(static_cast<unsigned char>(device_name[i]));
  };
  return at != std::string_view::npos && (at == 0 || boundary(at - 1)) && boundary(at + model.size());
}

const GpuSpec& HardwareCatalog::gpu(std::string_view name) const {
  if (const GpuSpec* g = find_gpu(name)) return *g;
  throw UsageError("unknown GPU '" + std::string(name) + "'; known GPUs: " + gpu_names());
}

std::string HardwareCatalog::gpu_names() const {
  std::string out;
  for (const auto& g : gpus_) out += (out.empty() ? "" : ", ") + g.name;
  return out;
}

double HardwareCatalog::pcie_bandwidth(int gen, int lanes) const {
  auto it = pcie_x16_.find(gen);
  if (it == pcie_x16_.end()) throw ValueError("unknown PCIe generation " + std::to_string(gen));
  if (lanes <= 0 || lanes > 32)
    throw ValueError("PCIe lane count " + std::to_string(lanes) + " out of range");
  return it->second * lanes / 16.0;
}

Picoseconds HardwareCatalog::fabric_hop_latency(std::string_view kind) const {
  auto it = fabric_hop_latency_.find(kind);
  if (it == fabric_hop_latency_.end()) {
    std::string list;
    for (const auto& [k, v] : fabric_hop_latency_) list += (list.empty() ? "" : ", ") + k;
    throw ValueError("unknown fabric kind '" + std::string(kind) + "'; valid kinds: " + list);
  }
  return it->second;
}

}  // namespace commsim::models
