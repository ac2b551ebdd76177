// libFuzzer target: sweep specifications (sim/sweeps/*.toml), read and planned as `commsim sweep SPEC` does
// before it simulates: the grid's size, its first and last points and the sidecar metadata.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "commsim/core/error.hpp"
#include "commsim/sim/sweep.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const commsim::sim::SweepSpec spec = commsim::sim::SweepSpec::parse(text, "fuzz-sweep.toml");
    const std::size_t n = spec.points();
    if (n > 0) {
      (void)commsim::sim::sweep_point(spec, 0);
      (void)commsim::sim::sweep_point(spec, n / 2);
      (void)commsim::sim::sweep_point(spec, n - 1);
    }
    (void)commsim::sim::sweep_meta(spec, commsim::sim::Shard{}, {});
  } catch (const commsim::Error&) {
  }
  return 0;
}
