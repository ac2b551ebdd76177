// libFuzzer target: model parameter files (models/params/*.toml), read over the defaults as `--params FILE`,
// then used for one simulated all_reduce and its prediction band.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "commsim/core/error.hpp"
#include "commsim/models/params.hpp"
#include "commsim/models/transfer.hpp"
#include "commsim/sim/runtime.hpp"
#include "commsim/validation/accuracy.hpp"
#include "fuzz_runtime.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto params =
        commsim::models::ModelParams::parse(text, "fuzz.toml", commsim::models::ModelParams::defaults());
    (void)params.provenance();
    const auto model = commsim::models::make_transfer_model("nccl", params, {});
    commsim::sim::Runtime runtime(commsim::fuzz::h200x4(), *model);
    constexpr std::uint64_t kBytes = 1 << 20;
    const auto result =
        runtime.run(commsim::validation::nccl_tests_program("all_reduce", {0, 1, 2, 3}, kBytes, false));
    (void)commsim::models::band_of(params, kBytes, static_cast<double>(result.per_iteration) / 1e6);
  } catch (const commsim::Error&) {
  }
  return 0;
}
