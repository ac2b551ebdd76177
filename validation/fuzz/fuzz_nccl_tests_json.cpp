// libFuzzer target: nccl-tests JSON output (`-J FILE`), read and simulated as `commsim validate
// --nccl-tests`.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "commsim/core/error.hpp"
#include "commsim/core/limits.hpp"
#include "commsim/validation/accuracy.hpp"
#include "commsim/validation/nccl_tests.hpp"
#include "fuzz_runtime.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // The reader takes a document whose first character is '{' as JSON; the text target covers the rest.
  const std::string_view body = commsim::strip_utf8_bom(text);
  const auto first = body.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || body[first] != '{') return 0;
  try {
    const auto runs = commsim::validation::parse_nccl_tests(text, "fuzz.json");
    (void)commsim::validation::compare(runs, commsim::fuzz::h200x4_runtime(), {}, 1, 0);
  } catch (const commsim::Error&) {
  }
  return 0;
}
