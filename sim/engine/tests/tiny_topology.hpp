// Test helper: a one-machine topology from an inline `nvidia-smi topo -m` matrix, for closed-form engine
// tests.
#pragma once

#include "commsim/models/hardware.hpp"
#include "commsim/topo/builder.hpp"
#include "commsim/topo/topo_matrix.hpp"

namespace commsim::sim::testing {

inline topo::Topology tiny(const char* matrix, const char* gpu) {
  topo::Topology t;
  topo::Diagnostics diag;
  topo::NodeBuildOptions o;
  o.gpu = gpu;
  topo::add_matrix_node(t, topo::parse_topo_matrix(matrix, "tiny.topo"), o,
                        models::HardwareCatalog::builtin(), diag);
  return t;
}

/// Two GPUs joined by a 4-link NVLink bundle (4 x 14.0625 GB/s on an A6000).
constexpr const char* kBridge = "\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\t X \n";
constexpr double kBridgeBw = 4 * 14.0625e9;

}  // namespace commsim::sim::testing
