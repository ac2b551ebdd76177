// Output of `commsim topo show`: a readable summary, JSON for scripts, and Graphviz DOT.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "commsim/topo/builder.hpp"
#include "commsim/topo/topology.hpp"

namespace commsim::topo {

/// Per-direction peak bandwidth and latency between every ordered GPU pair (routes computed once per source).
struct PathEntry {
  int src = 0;
  int dst = 0;
  std::string type;      ///< nvidia-smi code ("NV18", "PIX", "SYS") or "NET" across machines
  double bandwidth = 0;  ///< bytes/s per direction, bottleneck of the route
  Picoseconds latency = 0;
  int hops = 0;
};
/// Ordered GPU pairs with their route's code, bottleneck and latency: from every GPU, or only from the first
/// machine's GPUs (`from_first_machine`; they come first in GPU order, so entries are indexed the same way).
std::vector<PathEntry> gpu_paths(const Topology& topo, bool from_first_machine = false);

/// JSON output lists every ordered pair up to this many GPUs, and only the first machine's beyond.
inline constexpr std::size_t kAllPathsMaxGpus = 256;

/// JSON document: {"schema", "name", "source", "nodes", "gpus", "nics", "switches", "links", "paths",
/// "fabric", "notes", "warnings"}. Bandwidths are *_gbps in GB/s (1e9 bytes/s) per direction; latencies *_us.
nlohmann::json to_json(const Topology& topo, const Diagnostics& diag);
/// Human summary: machines, GPUs, NICs, inferred switches and the GPU path matrix.
std::string to_text(const Topology& topo, const Diagnostics& diag);
/// Graphviz: one undirected edge per physical link, labelled with kind, width and bandwidth.
std::string to_dot(const Topology& topo);

}  // namespace commsim::topo
