// libFuzzer target: `nvidia-smi topo -m` parsing and graph inference must never crash or hang.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "commsim/core/error.hpp"
#include "commsim/topo/builder.hpp"
#include "commsim/topo/render.hpp"
#include "commsim/topo/topo_matrix.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto m = commsim::topo::parse_topo_matrix(text, "fuzz.topo");
    commsim::topo::Topology topo;
    commsim::topo::Diagnostics diag;
    commsim::topo::NodeBuildOptions options;
    commsim::topo::add_matrix_node(topo, m, options, commsim::models::HardwareCatalog::builtin(), diag);
    (void)commsim::topo::to_json(topo, diag);
  } catch (const commsim::Error&) {
  }
  return 0;
}
