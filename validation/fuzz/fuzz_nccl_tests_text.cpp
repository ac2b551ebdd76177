// libFuzzer target: nccl-tests text logs (`*_perf` output), read and simulated as `commsim validate
// --nccl-tests`.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "commsim/core/error.hpp"
#include "commsim/validation/accuracy.hpp"
#include "commsim/validation/nccl_tests.hpp"
#include "fuzz_runtime.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto runs = commsim::validation::parse_nccl_tests(text, "fuzz.log");
    (void)commsim::validation::compare(runs, commsim::fuzz::h200x4_runtime(), {}, 1, 0);
  } catch (const commsim::Error&) {
  }
  return 0;
}
