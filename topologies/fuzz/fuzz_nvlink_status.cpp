// libFuzzer target: `nvidia-smi nvlink -s` parsing must never crash or hang.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "commsim/core/error.hpp"
#include "commsim/topo/nvlink_status.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)commsim::topo::parse_nvlink_status(std::string_view(reinterpret_cast<const char*>(data), size),
                                             "fuzz.nvlink");
  } catch (const commsim::Error&) {
  }
  return 0;
}
