// The one vocabulary of physical link kinds, shared by the topology graph (topologies/) and the cost models.
#pragma once

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

}  // namespace commsim::models
