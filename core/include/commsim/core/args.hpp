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
/// Parses a command-line size into bytes, in nccl-tests' forms as well as commsim's: a bare number is bytes
/// ("8"); K, M, G, T (or k, m, g, t) are powers of 1024 as nccl-tests reads them ("128M" = 128 MiB); KB, MB,
/// GB, TB are powers of 1000 and KiB, MiB, GiB, TiB powers of 1024, as in files; B is bytes. Sizes inside
/// TOML files do not come here: they keep parse_size's mandatory unit. Throws ValueError.
std::uint64_t parse_cli_size(std::string_view text);
/// Parses a size flag ("1GiB", "8B", "8", "128M": parse_cli_size) into bytes; zero, negative, badly written
/// or overflowing values, and sizes above kMaxBytes (4 TiB), throw UsageError naming `flag`.
std::uint64_t parse_size_flag(const std::string& flag, const std::string& value);
/// Parses a time flag into a number of `unit`s (the flag's documented unit, e.g. "us" for --fwd-us): a
/// bare number is already in `unit` ("500" = 500 us); a number with a duration unit (ps, ns, us, ms, s)
/// is converted ("1.5ms" = 1500 us). A minus sign is kept (range checks are the caller's); infinite or
/// badly written values throw UsageError naming `flag`.
double parse_time_flag(const std::string& flag, const std::string& value, std::string_view unit);
/// "0-7,12", "all": GPU indices in the order written, checked against `gpu_count` (no GPU twice). Throws
/// UsageError.
std::vector<int> parse_gpu_list(std::string_view spec, int gpu_count);
/// "a,b,,c" -> {"a", "b", "c"}: the non-empty items of a comma-separated list.
std::vector<std::string> split_list(const std::string& s);
/// The candidate closest to `word` by edit distance, for "did you mean" hints; "" when none is close (more
/// than a third of the longer name changed, or more than 3 edits).
std::string closest_name(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace commsim
