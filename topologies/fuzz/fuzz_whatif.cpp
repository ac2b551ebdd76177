// libFuzzer target: what-if TOML loading (presets, overrides, fabrics) must never crash or hang.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "commsim/core/error.hpp"
#include "commsim/topo/load.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // Cap node counts so one input cannot ask for a 100,000-node cluster: that is a size, not a parser,
  // question.
  if (text.find("count") != std::string_view::npos) {
    for (std::size_t i = text.find("count"); i != std::string_view::npos; i = text.find("count", i + 1)) {
      std::size_t j = i + 5;
      while (j < text.size() && (text[j] == ' ' || text[j] == '=' || text[j] == '\t')) ++j;
      std::size_t digits = 0;
      while (j + digits < text.size() && text[j + digits] >= '0' && text[j + digits] <= '9') ++digits;
      if (digits > 2) return 0;
    }
  }
  try {
    commsim::topo::Diagnostics diag;
    (void)commsim::topo::load_whatif(text, "fuzz.toml", "/nonexistent", {}, diag,
                                     commsim::models::HardwareCatalog::builtin());
  } catch (const commsim::Error&) {
  }
  return 0;
}
