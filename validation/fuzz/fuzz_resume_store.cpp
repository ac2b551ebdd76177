// libFuzzer target: the results.jsonl store that `commsim-measure --resume` reads (measure::scan_results).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "commsim/core/error.hpp"
#include "commsim/measure/results.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    // The plan the seeds were written for (validation/fuzz/corpus/fuzz_resume_store/), with 8 configurations.
    (void)commsim::measure::scan_results_text(text, "fuzz/results.jsonl", "0123456789abcdef", 8);
  } catch (const commsim::Error&) {
  }
  return 0;
}
