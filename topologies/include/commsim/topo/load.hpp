// Loading a topology from any supported file: `nvidia-smi topo -m` text or a what-if TOML cluster
// description.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "commsim/core/embedded.hpp"
#include "commsim/models/hardware.hpp"
#include "commsim/topo/builder.hpp"
#include "commsim/topo/topology.hpp"

namespace commsim::topo {

struct LoadOptions {
  std::string gpu;          ///< --gpu NAME: overrides what the file says or implies
  std::string nvlink_file;  ///< --nvlink FILE; otherwise a sibling "<stem>.nvlink" is used when present
};

/// Loads FILE. Format by content: a TOML what-if (".toml"), else `nvidia-smi topo -m` text.
/// Throws IoError, InputError (with file, line, column) or UsageError (unknown --gpu).
Topology load_topology(const std::string& path, const LoadOptions& options, Diagnostics& diag,
                       const models::HardwareCatalog& hw = models::HardwareCatalog::builtin());

/// A file a topology reads besides itself: what names it ("topo_file of [[nodes]] 2", "its .nvlink file")
/// and its path.
struct TopologyInput {
  std::string what;
  std::string path;
};

/// The files load_topology(path) reads besides `path`: the sibling `nvidia-smi nvlink -s` capture, and for a
/// what-if TOML every [[nodes]] topo_file and nvlink_file (explicit or sibling), resolved as the loader
/// resolves them. For the output guard: an output onto any of them is refused. A file that cannot be read
/// or parsed yields what could be found (loading reports the error).
std::vector<TopologyInput> topology_inputs(const std::string& path);

/// Builds a topology from what-if TOML text; relative topo_file paths resolve against `base_dir`.
Topology load_whatif(std::string_view text, const std::string& file, const std::string& base_dir,
                     const LoadOptions& options, Diagnostics& diag, const models::HardwareCatalog& hw);

/// A bundled machine: a topo matrix from topologies/library/real with its GPU, usable as a what-if preset.
struct Preset {
  std::string name;
  std::string description;
  std::string gpu;
  std::string topo_path;    ///< relative to topologies/library
  std::string nvlink_path;  ///< may be empty
};

/// The presets of topologies/library/presets.toml (embedded).
const std::vector<Preset>& presets();
/// Contents of an embedded library file by its path relative to topologies/library; throws if absent.
std::string_view library_file(std::string_view path);

}  // namespace commsim::topo
