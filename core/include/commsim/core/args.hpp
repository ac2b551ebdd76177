// The one parser of command-line sizes, size sweeps and GPU lists, shared by commsim and commsim-measure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace commsim {

/// Sizes min, min*factor, ... up to max (bytes). Throws UsageError for zero sizes, min > max, factor <= 1, a
/// max above kMaxBytes, or more than kMaxSweepSteps steps (core/limits.hpp).
std::vector<std::uint64_t> size_sweep(std::uint64_t min_bytes, std::uint64_t max_bytes, double factor);
/// Parses a size flag ("1GiB", "8B") into bytes; zero, negative, unit-less or overflowing values, and sizes
/// above kMaxBytes (4 TiB), throw UsageError naming `flag`.
std::uint64_t parse_size_flag(const std::string& flag, const std::string& value);
/// "0-7,12", "all": GPU indices in the order written, checked against `gpu_count` (no GPU twice). Throws
/// UsageError.
std::vector<int> parse_gpu_list(std::string_view spec, int gpu_count);
/// "a,b,,c" -> {"a", "b", "c"}: the non-empty items of a comma-separated list.
std::vector<std::string> split_list(const std::string& s);

}  // namespace commsim
