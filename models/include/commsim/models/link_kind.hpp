// The one vocabulary of physical link kinds and of how a saturating link delivers, shared by the topology
// graph (topologies/), the cost models and the engine's flow network.
#pragma once

#include <cmath>

namespace commsim::models {

/// The kind of one physical link. A model decides each kind's usable fraction of peak bandwidth; a Network
/// link's also depends on whether the fabric carries TCP sockets.
enum class LinkKind {
  NvLink,    ///< an NVLink bundle, GPU to GPU or GPU to NVSwitch
  Pcie,      ///< a PCIe link, device or switch to its parent switch or host bridge
  HostLink,  ///< host bridge (root complex) to its CPU and memory
  Smp,       ///< between the CPUs (NUMA domains) of one machine
  Network    ///< NIC to fabric switch, or switch to switch
};

/// What a link of `capacity` bytes/s that saturates smoothly with sharpness `k` > 0 delivers (bytes/s) under
/// an offered load of `demand` bytes/s: D / (1 + (D/C)^k)^(1/k), a smooth minimum of the load and the
/// capacity that tends to the hard one as k grows. The engine's flow network (FlowNetwork::add_resource) and
/// the cost models (a ring's last slice, models/src/collective.cpp) both use it.
inline double saturated_rate(double demand, double capacity, double k) {
  return demand / std::pow(1.0 + std::pow(demand / capacity, k), 1.0 / k);
}

}  // namespace commsim::models
