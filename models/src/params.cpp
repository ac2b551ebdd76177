// Table-driven loading of transfer-model parameter sets with unit and range checks.
#include "commsim/models/params.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <vector>

#include "commsim/core/embedded.hpp"
#include "commsim/core/error.hpp"
#include "commsim/core/limits.hpp"
#include "commsim/core/text.hpp"
#include "commsim/core/toml_fields.hpp"

namespace commsim::models {

std::span<const EmbeddedFile> embedded_params();

namespace {

enum class Kind { Size, Bandwidth, Duration, Ratio, Fraction, Count, Sharpness };

struct Field {
  std::string_view section;
  std::string_view key;
  Kind kind;
  std::function<void(ModelParams&, double)> set;
};

template <typename T>
std::function<void(ModelParams&, double)> to(T ModelParams::*member) {
  return [member](ModelParams& p, double v) { p.*member = static_cast<T>(v); };
}
template <typename T, std::size_t N>
std::function<void(ModelParams&, double)> to_coll(T (CollectiveParams::*member)[N], std::size_t i) {
  return [member, i](ModelParams& p, double v) { (p.coll.*member)[i] = static_cast<T>(v); };
}
template <typename T>
std::function<void(ModelParams&, double)> to(ProtocolParams ModelParams::*proto, T ProtocolParams::*member) {
  return [proto, member](ModelParams& p, double v) { (p.*proto).*member = static_cast<T>(v); };
}

std::function<void(ModelParams&, double)> to_band(double BandParams::*member) {
  return [member](ModelParams& p, double v) { p.band.*member = v; };
}

const std::vector<Field>& fields() {
  using P = ModelParams;
  static const std::vector<Field> list = {
      {"nccl", "steps", Kind::Count, to(&P::steps)},
      {"nccl", "buffsize", Kind::Size, to(&P::buffsize)},
      {"nccl", "ll_buffsize", Kind::Size, to(&P::ll_buffsize)},
      {"nccl", "p2p_ll_threshold", Kind::Size, to(&P::p2p_ll_threshold)},
      {"nccl", "p2p_nvl_chunksize", Kind::Size, to(&P::p2p_nvl_chunksize)},
      {"nccl", "p2p_pci_chunksize", Kind::Size, to(&P::p2p_pci_chunksize)},
      {"nccl", "p2p_net_chunksize", Kind::Size, to(&P::p2p_net_chunksize)},
      {"nccl", "max_channels", Kind::Count, to(&P::max_channels)},
      {"nccl", "nccl_nvlink_bandwidth_sm90", Kind::Bandwidth, to(&P::nccl_nvlink_bandwidth_sm90)},
      {"nccl", "ring_channel_bandwidth", Kind::Bandwidth, to(&P::ring_channel_bandwidth)},
      {"nccl", "coll_channels_no_nvlink", Kind::Count, to(&P::coll_channels_no_nvlink)},
      {"host", "launch_base", Kind::Duration, to(&P::launch_base)},
      {"host", "launch_per_gpu", Kind::Duration, to(&P::launch_per_gpu)},
      {"host", "launch_per_op", Kind::Duration, to(&P::launch_per_op)},
      {"host", "launch_compute", Kind::Duration, to(&P::launch_compute)},
      {"host", "launch_per_coll", Kind::Duration, to(&P::launch_per_coll)},
      {"host", "launch_scale", Kind::Ratio, to(&P::launch_scale)},
      {"torch", "call_overhead", Kind::Duration, to(&P::torch_call)},
      {"copy", "submit", Kind::Duration, to(&P::copy_submit)},
      {"copy", "latency", Kind::Duration, to(&P::copy_latency)},
      {"copy", "nvlink_efficiency", Kind::Ratio, to(&P::copy_nvlink_efficiency)},
      {"copy", "bandwidth", Kind::Bandwidth, to(&P::copy_bandwidth)},
      {"setup", "comm_init", Kind::Duration, to(&P::comm_init)},
      {"setup", "comm_destroy", Kind::Duration, to(&P::comm_destroy)},
      {"setup", "engine_register", Kind::Duration, to(&P::engine_register)},
      {"setup", "engine_stop", Kind::Duration, to(&P::engine_stop)},
      {"kernel", "launch_latency", Kind::Duration, to(&P::kernel_launch_latency)},
      {"kernel", "gap", Kind::Duration, to(&P::kernel_gap)},
      {"kernel", "timing_event", Kind::Duration, to(&P::timing_event)},
      {"kernel", "graph_gap", Kind::Duration, to(&P::graph_gap)},
      {"kernel", "graph_join", Kind::Duration, to(&P::graph_join)},
      {"simple", "base_latency", Kind::Duration, to(&P::simple, &ProtocolParams::base_latency)},
      {"simple", "step_overhead", Kind::Duration, to(&P::simple, &ProtocolParams::step_overhead)},
      {"simple", "channel_latency", Kind::Duration, to(&P::simple, &ProtocolParams::channel_latency)},
      {"simple", "channel_bandwidth", Kind::Bandwidth, to(&P::simple, &ProtocolParams::channel_bandwidth)},
      {"simple", "fill_bandwidth", Kind::Bandwidth, to(&P::simple, &ProtocolParams::fill_bandwidth)},
      {"ll", "base_latency", Kind::Duration, to(&P::ll, &ProtocolParams::base_latency)},
      {"ll", "channel_bandwidth", Kind::Bandwidth, to(&P::ll, &ProtocolParams::channel_bandwidth)},
      {"ll", "channel_latency", Kind::Duration, to(&P::ll, &ProtocolParams::channel_latency)},
      {"ll", "wire_efficiency", Kind::Ratio, to(&P::ll, &ProtocolParams::wire_efficiency)},
      {"p2p", "nvlink_efficiency", Kind::Ratio, to(&P::nvlink_efficiency)},
      {"p2p", "pcie_efficiency", Kind::Ratio, to(&P::pcie_efficiency)},
      {"p2p", "solo_speedup", Kind::Ratio, to(&P::solo_speedup)},
      {"p2p", "self_copy_bandwidth", Kind::Bandwidth, to(&P::self_copy_bandwidth)},
      {"p2p", "split_rate", Kind::Ratio, to(&P::split_rate)},
      {"p2p", "split3_rate", Kind::Fraction, to(&P::split3_rate)},
      {"p2p", "channel_budget", Kind::Ratio, to(&P::channel_budget)},
      {"p2p", "peer_ramp", Kind::Fraction, to(&P::peer_ramp)},
      {"p2p", "peer_ramp_time", Kind::Duration, to(&P::peer_ramp_time)},
      {"p2p", "peer_rate_loss", Kind::Fraction, to(&P::peer_rate_loss)},
      {"p2p", "port_ramp", Kind::Fraction, to(&P::port_ramp)},
      {"p2p", "port_ramp_time", Kind::Duration, to(&P::port_ramp_time)},
      {"p2p", "nvlink_saturation", Kind::Sharpness, to(&P::nvlink_saturation)},
      {"p2p", "pcie_saturation", Kind::Sharpness, to(&P::pcie_saturation)},
      {"shm", "base_latency", Kind::Duration, to(&P::shm_base_latency)},
      {"shm", "channel_bandwidth", Kind::Bandwidth, to(&P::shm_channel_bandwidth)},
      {"shm", "bandwidth", Kind::Bandwidth, to(&P::shm_bandwidth)},
      {"shm", "host_memory_bandwidth", Kind::Bandwidth, to(&P::shm_host_memory_bandwidth)},
      {"net", "base_latency", Kind::Duration, to(&P::net_base_latency)},
      {"net", "channel_bandwidth", Kind::Bandwidth, to(&P::net_channel_bandwidth)},
      {"net", "nic_efficiency", Kind::Ratio, to(&P::net_nic_efficiency)},
      {"net", "tcp_efficiency", Kind::Ratio, to(&P::net_tcp_efficiency)},
      {"net", "tcp_latency", Kind::Duration, to(&P::net_tcp_latency)},
      {"collective", "ll_base_latency", Kind::Duration, to_coll(&CollectiveParams::base_latency, 0)},
      {"collective", "ll128_base_latency", Kind::Duration, to_coll(&CollectiveParams::base_latency, 1)},
      {"collective", "simple_base_latency", Kind::Duration, to_coll(&CollectiveParams::base_latency, 2)},
      {"collective", "ll_hop_latency", Kind::Duration, to_coll(&CollectiveParams::hop_latency, 0)},
      {"collective", "ll128_hop_latency", Kind::Duration, to_coll(&CollectiveParams::hop_latency, 1)},
      {"collective", "simple_hop_latency", Kind::Duration, to_coll(&CollectiveParams::hop_latency, 2)},
      {"collective", "ll_net_hop_latency", Kind::Duration, to_coll(&CollectiveParams::net_hop_latency, 0)},
      {"collective", "ll128_net_hop_latency", Kind::Duration, to_coll(&CollectiveParams::net_hop_latency, 1)},
      {"collective", "simple_net_hop_latency", Kind::Duration,
       to_coll(&CollectiveParams::net_hop_latency, 2)},
      {"collective", "ll_channel_bandwidth", Kind::Bandwidth,
       to_coll(&CollectiveParams::channel_bandwidth, 0)},
      {"collective", "ll128_channel_bandwidth", Kind::Bandwidth,
       to_coll(&CollectiveParams::channel_bandwidth, 1)},
      {"collective", "simple_channel_bandwidth", Kind::Bandwidth,
       to_coll(&CollectiveParams::channel_bandwidth, 2)},
      {"collective", "all_reduce_efficiency", Kind::Ratio, to_coll(&CollectiveParams::efficiency, 0)},
      {"collective", "all_gather_efficiency", Kind::Ratio, to_coll(&CollectiveParams::efficiency, 1)},
      {"collective", "reduce_scatter_efficiency", Kind::Ratio, to_coll(&CollectiveParams::efficiency, 2)},
      {"collective", "broadcast_efficiency", Kind::Ratio, to_coll(&CollectiveParams::efficiency, 3)},
      {"collective", "reduce_efficiency", Kind::Ratio, to_coll(&CollectiveParams::efficiency, 4)},
      {"collective", "tree_efficiency", Kind::Ratio, to(&P::coll_tree_efficiency)},
      {"collective", "ring_recv_step", Kind::Fraction, to(&P::coll_ring_recv_step)},
      {"collective", "reduce_step", Kind::Ratio, to(&P::coll_reduce_step)},
      {"collective", "channel_recv_step", Kind::Fraction, to(&P::coll_channel_recv_step)},
      {"collective", "ll_recv_step", Kind::Fraction, to(&P::coll_ll_recv_step)},
      {"band", "latency_below", Kind::Ratio, to_band(&BandParams::latency_below)},
      {"band", "latency_above", Kind::Ratio, to_band(&BandParams::latency_above)},
      {"band", "bandwidth_below", Kind::Ratio, to_band(&BandParams::bandwidth_below)},
      {"band", "bandwidth_above", Kind::Ratio, to_band(&BandParams::bandwidth_above)},
  };
  return list;
}

}  // namespace

const ModelParams& ModelParams::defaults() {
  static const ModelParams p = [] {
    for (const auto& f : embedded_params()) {
      if (f.path == "nccl-default.toml")
        return parse(f.contents, "models/params/nccl-default.toml", ModelParams{});
    }
    throw Error("models/params/nccl-default.toml was not embedded in this build");
  }();
  return p;
}

const ModelParams* ModelParams::fitted_for_gpu(const std::string& gpu_model) {
  static const std::vector<ModelParams> sets = [] {
    std::vector<ModelParams> out;
    for (const auto& f : embedded_params()) {
      if (f.path == "nccl-default.toml" || f.path == "hardware.toml") continue;
      out.push_back(parse(f.contents, "models/params/" + std::string(f.path), defaults()));
    }
    return out;
  }();
  for (const auto& s : sets) {
    if (!s.fitted.empty() && !gpu_model.empty() && s.gpu == gpu_model) return &s;
  }
  return nullptr;
}

std::string ModelParams::provenance() const {
  std::string out = name + " (" + (source.empty() ? "built in" : source);
  if (fitted.empty()) return out + "; not fitted: datasheet estimates, wider datasheet band)";
  return out + "; fitted: " + fitted + ")";
}

BandParams network_band(const ModelParams& params) {
  if (params.fitted.empty() || params.fitted_network) return params.band;
  const BandParams& d = ModelParams::defaults().band;
  const BandParams& b = params.band;
  return {std::max(b.latency_below, d.latency_below), std::max(b.latency_above, d.latency_above),
          std::max(b.bandwidth_below, d.bandwidth_below), std::max(b.bandwidth_above, d.bandwidth_above)};
}

Band band_of(const ModelParams& params, std::uint64_t bytes, double time_us) {
  const bool latency = bytes < kBandRegimeBytes;
  const double below = latency ? params.band.latency_below : params.band.bandwidth_below;
  const double above = latency ? params.band.latency_above : params.band.bandwidth_above;
  return {time_us * (1 - below), time_us * (1 + above)};
}

namespace {

/// ModelParams::parse on the parsed `root`, and with `allow_base` the same for a file whose `base` load() has
/// resolved.
ModelParams parse_set(const toml::table& root, const std::string& file, const ModelParams& base,
                      bool allow_base) {
  ModelParams p = base;
  p.source = file;
  TomlFields top(root, file, "");
  std::vector<std::string_view> sections;
  for (const Field& f : fields()) {
    if (std::find(sections.begin(), sections.end(), f.section) == sections.end())
      sections.push_back(f.section);
  }
  if (root.contains("base") && !allow_base)
    top.fail("base", "a base set is resolved only when a parameter file is loaded from disk");
  for (const auto& [k, v] : root) {
    const std::string key(k.str());
    if (key == "name" || key == "description" || key == "fitted" || key == "gpu" || key == "nccl_version" ||
        key == "fitted_network" || key == "base")
      continue;
    if (std::find(sections.begin(), sections.end(), key) == sections.end()) {
      std::string list = "name, description, fitted, gpu, nccl_version, fitted_network, base";
      for (auto s : sections) list += ", [" + std::string(s) + "]";
      top.fail(key, "unknown key or section; valid: " + list);
    }
    if (!v.is_table()) top.fail(key, "expected a table");
    TomlFields sf(*v.as_table(), file, "[" + key + "]");
    for (const auto& [sk, sv] : *v.as_table()) {
      const std::string name(sk.str());
      const Field* field = nullptr;
      std::string valid;
      for (const Field& f : fields()) {
        if (f.section != key) continue;
        valid += (valid.empty() ? "" : ", ") + std::string(f.key);
        if (f.key == name) field = &f;
      }
      if (!field) sf.fail(name, "unknown key; valid keys in [" + key + "]: " + valid);
      double value = 0;
      switch (field->kind) {
        case Kind::Size: {
          const std::uint64_t bytes = *sf.size(name);
          if (bytes > kMaxBytes)
            sf.fail(name, "larger than the largest size commsim simulates (" + format_size(kMaxBytes) + ")");
          value = static_cast<double>(bytes);
          break;
        }
        case Kind::Bandwidth:
          value = *sf.bandwidth(name);
          break;
        case Kind::Duration:
          value = static_cast<double>(*sf.duration(name));
          break;
        case Kind::Ratio: {
          const toml::node* n = v.as_table()->get(name);
          if (!n->is_number()) sf.fail(name, "expected a plain number (a ratio, no unit)");
          value = n->value<double>().value_or(0);
          if (!(value > 0) || value > 100) sf.fail(name, "must be a positive ratio");
          break;
        }
        case Kind::Fraction: {
          const toml::node* n = v.as_table()->get(name);
          if (!n->is_number()) sf.fail(name, "expected a plain number (a ratio, no unit)");
          value = n->value<double>().value_or(-1);
          if (!(value >= 0) || value > 100) sf.fail(name, "must be a ratio of 0 or more");
          break;
        }
        case Kind::Sharpness: {
          const toml::node* n = v.as_table()->get(name);
          if (!n->is_number()) sf.fail(name, "expected a plain number (0 for a hard limit)");
          value = n->value<double>().value_or(0);
          if (value < 0 || value > 100) sf.fail(name, "must be between 0 (hard limit) and 100");
          break;
        }
        case Kind::Count: {
          value = static_cast<double>(*sf.integer(name));
          if (value < 0 || value > 1024) sf.fail(name, "must be between 0 and 1024");
          break;
        }
      }
      field->set(p, value);
    }
  }
  p.name = top.string("name").value_or(p.name);
  p.description = top.string("description").value_or(p.description);
  p.fitted = top.string("fitted").value_or(p.fitted);
  p.gpu = top.string("gpu").value_or(p.gpu);
  p.nccl_version = top.string("nccl_version").value_or(p.nccl_version);
  p.fitted_network = top.boolean("fitted_network").value_or(p.fitted_network);
  // Consistency that the model relies on.
  auto require = [&](bool ok, const char* what) {
    if (!ok) throw InputError({file, 1, 1}, std::string("parameter set is inconsistent: ") + what);
  };
  require(p.steps >= 1, "[nccl] steps must be at least 1");
  require(p.buffsize >= static_cast<std::uint64_t>(p.steps), "[nccl] buffsize must hold every step");
  require(p.p2p_nvl_chunksize > 0 && p.p2p_pci_chunksize > 0 && p.p2p_net_chunksize > 0,
          "chunk sizes must be > 0");
  require(p.max_channels >= 1, "[nccl] max_channels must be at least 1");
  require(p.simple.channel_bandwidth > 0 && p.ll.channel_bandwidth > 0, "channel bandwidths must be > 0");
  for (double b : p.coll.channel_bandwidth) require(b > 0, "[collective] channel bandwidths must be > 0");
  for (double e : p.coll.efficiency)
    require(e > 0 && e <= 1.5, "[collective] efficiencies must be in (0, 1.5]");
  require(p.band.latency_below < 1 && p.band.bandwidth_below < 1,
          "[band] latency_below and bandwidth_below must be below 1 (a band reaching zero time)");
  require(p.shm_bandwidth > 0 && p.shm_channel_bandwidth > 0 && p.net_channel_bandwidth > 0,
          "transport bandwidths must be > 0");
  require(p.channel_budget >= 0, "p2p.channel_budget must be >= 0 (leave the key out: no budget)");
  require(p.peer_ramp == 0 || p.peer_ramp_time > 0,
          "p2p.peer_ramp needs p2p.peer_ramp_time > 0 (the time its start-up loss takes to fade)");
  require(p.port_ramp == 0 || p.port_ramp_time > 0,
          "p2p.port_ramp needs p2p.port_ramp_time > 0 (the time its start-up loss takes to fade)");
  require(p.shm_host_memory_bandwidth >= 0,
          "shm.host_memory_bandwidth must be >= 0 (leave the key out: not limited)");
  return p;
}

/// The file's text checked and parsed, errors located in `file`.
toml::table parse_text(std::string_view toml_text, const std::string& file) {
  require_text(toml_text, file, "a TOML parameter set");
  return parse_toml(toml_text, file);
}

constexpr int kMaxBaseChain = 8;

/// Loads `path`, and first its base set when it names one. `chain`: the files that named it, outermost first.
ModelParams load_chain(const std::string& path, std::vector<std::string>& chain) {
  const toml::table root = parse_text(read_file(path), path);
  if (!root.contains("base")) return parse_set(root, path, ModelParams::defaults(), false);
  const TomlFields top(root, path, "");
  const std::string rel = top.required_string("base");
  if (rel.empty()) top.fail("base", "is empty: name the parameter file this set is read over");
  // The file is checked and read under the same path (no textual normalisation: a symlinked folder's ".."
  // then means what the file system says).
  const std::filesystem::path base_path = std::filesystem::path(path).parent_path() / rel;
  if (!std::filesystem::is_regular_file(base_path))
    top.fail("base", "no such parameter file: " + base_path.string());
  std::error_code ec;  // both files exist (read, checked above)
  chain.push_back(std::filesystem::weakly_canonical(path, ec).string());
  if (std::find(chain.begin(), chain.end(), std::filesystem::weakly_canonical(base_path, ec).string()) !=
      chain.end())
    top.fail("base", "names " + base_path.string() + ", which is already in the chain of bases");
  if (static_cast<int>(chain.size()) > kMaxBaseChain)
    top.fail("base", "more than " + std::to_string(kMaxBaseChain) + " sets chained by base");
  ModelParams base;
  try {
    base = load_chain(base_path.string(), chain);
  } catch (const InputError& e) {
    throw InputError(e.where(), e.detail() + " (read as the base of " + path + ")");
  }
  return parse_set(root, path, base, true);
}

}  // namespace

ModelParams ModelParams::parse(std::string_view toml_text, const std::string& file, const ModelParams& base) {
  return parse_set(parse_text(toml_text, file), file, base, false);
}

ModelParams ModelParams::load(const std::string& path) {
  std::vector<std::string> chain;
  return load_chain(path, chain);
}

}  // namespace commsim::models
