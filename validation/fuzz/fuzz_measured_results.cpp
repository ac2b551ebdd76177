// libFuzzer target: commsim-measure results.json, read, simulated and reported as `commsim validate
// --measured`.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "commsim/core/error.hpp"
#include "commsim/validation/accuracy.hpp"
#include "commsim/validation/report.hpp"
#include "fuzz_runtime.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const commsim::validation::MeasuredRun run = commsim::validation::parse_measured(text, "fuzz-measured");
    (void)commsim::validation::measured_metadata(run);
    (void)commsim::validation::compare_measured(run, commsim::fuzz::h200x4_runtime(), 1, 0);
    (void)commsim::validation::pipeline_timeline(run, commsim::fuzz::h200x4_runtime());
  } catch (const commsim::Error&) {
  }
  return 0;
}
