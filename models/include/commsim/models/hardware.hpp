// Per-generation hardware constants (GPUs, PCIe, host, fabrics), loaded from models/params/hardware.toml.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "commsim/core/units.hpp"

namespace commsim::models {

/// One GPU generation. Bandwidths are bytes per second per direction.
struct GpuSpec {
  std::string name;  ///< canonical name, e.g. "H100"
  std::vector<std::string> aliases;
  std::string description;
  int release_year = 0;
  int sm = 0;                        ///< compute capability x 10 (90 for Hopper)
  int nvlink_generation = 0;         ///< 0 when the GPU has no NVLink
  int nvlink_links = 0;              ///< full NVLink count of one GPU
  double nvlink_link_bandwidth = 0;  ///< data rate of one link, bytes/s per direction
  double nvlink_signaling_rate = 0;  ///< what `nvidia-smi nvlink -s` prints per link, bytes/s
  bool nvswitch = false;             ///< ships on NVSwitch baseboards
  int pcie_gen = 4;
  int pcie_lanes = 16;
  double nic_bandwidth = 0;  ///< the platform's default NIC, bytes/s per direction
};

/// Latency of one hop of each link kind, picoseconds.
struct HopLatencies {
  Picoseconds nvlink = 0;
  Picoseconds nvswitch = 0;
  Picoseconds pcie = 0;
  Picoseconds pcie_switch = 0;
  Picoseconds host_bridge = 0;
  Picoseconds smp = 0;
};

/// Host-side defaults per NUMA domain.
struct HostSpec {
  double root_complex_bandwidth = 0;  ///< bytes/s per direction, host bridge <-> CPU/memory
  double smp_bandwidth = 0;           ///< bytes/s per direction between NUMA domains
  int nic_pcie_lanes = 16;
};

/// The whole catalogue. `builtin()` is the embedded models/params/hardware.toml.
class HardwareCatalog {
 public:
  static const HardwareCatalog& builtin();
  /// Parses a catalogue; errors name file, line and column.
  static HardwareCatalog parse(std::string_view toml_text, const std::string& file);

  std::span<const GpuSpec> gpus() const { return gpus_; }
  /// Looks a GPU up by canonical name or alias, ignoring case, spaces, dashes and an "NVIDIA"/"Tesla" prefix;
  /// also matches marketing names that start with a known name ("NVIDIA H100 80GB HBM3"). nullptr if unknown.
  const GpuSpec* find_gpu(std::string_view name) const;
  /// Whether a device as a driver names it ("NVIDIA H100 80GB HBM3") is the GPU model `model` ("H100"): both
  /// resolve to the same entry and neither adds a form factor the other lacks ("NVIDIA H200 NVL" is not an
  /// "H200": find_gpu's prefix match alone would take it for one); a name the catalogue does not know must
  /// contain `model` as a word of its own.
  bool same_gpu(std::string_view device_name, std::string_view model) const;
  /// As find_gpu, but throws UsageError listing the valid names.
  const GpuSpec& gpu(std::string_view name) const;
  /// Comma-separated canonical names, for messages.
  std::string gpu_names() const;

  /// Per-direction bandwidth of a PCIe link, bytes/s. Throws ValueError for an unknown generation.
  double pcie_bandwidth(int gen, int lanes) const;
  const HopLatencies& latency() const { return latency_; }
  const HostSpec& host() const { return host_; }
  /// Per-hop latency for a fabric kind ("infiniband", "roce", "tcp"); throws ValueError for others.
  Picoseconds fabric_hop_latency(std::string_view kind) const;

 private:
  std::vector<GpuSpec> gpus_;
  std::vector<std::vector<std::string>> gpu_names_;  ///< per GPU: its name and aliases, normalised
  std::map<int, double> pcie_x16_;                   ///< gen -> bytes/s per direction for x16
  HopLatencies latency_;
  HostSpec host_;
  std::map<std::string, Picoseconds, std::less<>> fabric_hop_latency_;
};

}  // namespace commsim::models
