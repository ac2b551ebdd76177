// libFuzzer target: what-if TOML loading (presets, overrides, fabrics) must never crash or hang.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "commsim/core/error.hpp"
#include "commsim/topo/load.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    commsim::topo::Diagnostics diag;
    (void)commsim::topo::load_whatif(text, "fuzz.toml", "/nonexistent", {}, diag,
                                     commsim::models::HardwareCatalog::builtin());
  } catch (const commsim::Error&) {
  }
  return 0;
}
