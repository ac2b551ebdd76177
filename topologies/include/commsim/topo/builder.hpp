// Infers a machine's link graph from an `nvidia-smi topo -m` matrix: NVSwitch or NVLink bundles, PCIe tree,
// NICs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commsim/models/hardware.hpp"
#include "commsim/topo/nvlink_status.hpp"
#include "commsim/topo/topo_matrix.hpp"
#include "commsim/topo/topology.hpp"

namespace commsim::topo {

/// What-if changes to one machine. Bandwidths in bytes/s per direction.
struct NodeOverrides {
  std::optional<int> nvlink_links;
  std::optional<double> nvlink_link_bandwidth;
  std::optional<int> pcie_gen;
  std::optional<int> pcie_lanes;
  std::optional<double> nic_bandwidth;
  std::optional<int> nics;  ///< keep only the machine's first N NICs (in `nvidia-smi topo -m` order)
  /// Keep only these NICs (0 = NIC0, in `nvidia-smi topo -m` order): where they sit in the machine (PCIe
  /// switch, socket) is where the captured matrix has them.
  std::optional<std::vector<int>> use_nics;
};

/// Warnings for stderr, each printed once.
class Diagnostics {
 public:
  void warn(const std::string& message);
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  std::vector<std::string> warnings_;
};

struct NodeBuildOptions {
  std::string gpu;         ///< --gpu NAME; empty to take it from nvlink -s or the default rule
  std::string gpu_origin;  ///< how `gpu` was chosen, for the summary ("--gpu", "what-if file", ...)
  const NvlinkStatus* nvlink = nullptr;  ///< optional `nvidia-smi nvlink -s` of the same machine
  NodeOverrides overrides;
  std::string name_prefix;  ///< prefix of vertex names, "" for one machine, "n3/" in clusters
  std::string source;       ///< file or preset name, for messages
};

/// The default GPU for a matrix that does not say which GPU it has (documented in topologies/README.md):
/// all pairs NV<n> -> the newest NVSwitch GPU with n links; NVLink bundles -> the newest GPU whose link count
/// equals the largest per-GPU bundle total; no NVLink -> the newest GPU without NVLink.
/// Returns the GPU and a one-line reason.
std::pair<const models::GpuSpec*, std::string> default_gpu_for(const TopoMatrix& m,
                                                               const models::HardwareCatalog& hw);

/// Adds one machine described by `m` to `topo` as a new node. Throws InputError (with the matrix cell's
/// location) when the matrix contradicts the GPU, e.g. more NVLinks than the GPU has.
void add_matrix_node(Topology& topo, const TopoMatrix& m, const NodeBuildOptions& options,
                     const models::HardwareCatalog& hw, Diagnostics& diag);

}  // namespace commsim::topo
