// The simulator the validation fuzz targets compare against: the bundled h200x4 topology with the fitted H200
// set.
#pragma once

#include <memory>
#include <string>

#include "commsim/models/params.hpp"
#include "commsim/models/transfer.hpp"
#include "commsim/sim/runtime.hpp"
#include "commsim/topo/load.hpp"

namespace commsim::fuzz {

/// topologies/library/real/h200x4.topo, loaded once.
inline const topo::Topology& h200x4() {
  static const topo::Topology topology = [] {
    topo::Diagnostics diag;
    return topo::load_topology(std::string(COMMSIM_SOURCE_DIR) + "/topologies/library/real/h200x4.topo", {},
                               diag);
  }();
  return topology;
}

/// A runtime on h200x4() with models/params/h200.toml, as `commsim validate --topology h200x4.topo` builds
/// it.
inline sim::Runtime& h200x4_runtime() {
  static const auto model = models::make_transfer_model(
      "nccl", models::ModelParams::load(std::string(COMMSIM_SOURCE_DIR) + "/models/params/h200.toml"), {});
  static sim::Runtime runtime(h200x4(), *model);
  return runtime;
}

}  // namespace commsim::fuzz
