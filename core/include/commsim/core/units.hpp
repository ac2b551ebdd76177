// Quantities with explicit units at every boundary: sizes (bytes), bandwidths (bytes/s), durations (ps).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace commsim {

/// Simulated time and durations, in integer picoseconds.
using Picoseconds = std::int64_t;

inline constexpr Picoseconds kPicosPerNano = 1000;
inline constexpr Picoseconds kPicosPerMicro = 1000 * 1000;
inline constexpr Picoseconds kPicosPerSecond = 1000LL * 1000 * 1000 * 1000;

/// Parses a size such as "24MiB", "1.5 KB", "8B" into bytes. Units: B, KB, MB, GB, TB (powers of 1000),
/// KiB, MiB, GiB, TiB (powers of 1024). A missing or unknown unit, a negative, fractional-byte or overflowing
/// value throws ValueError.
std::uint64_t parse_size(std::string_view text);

/// Parses a bandwidth such as "25GBps", "400Gbps", "31.5 GB/s" into bytes per second. Byte units
/// (Bps, KBps, MBps, GBps, TBps, KiBps, MiBps, GiBps, and the "/s" spellings B/s, GB/s, GiB/s ...) and bit
/// units (bps, Kbps, Mbps, Gbps, Tbps, Gb/s ...) are accepted. Throws ValueError, also outside the simulated
/// range [kMinBandwidth, kMaxBandwidth] (1 MB/s to 1 PB/s, core/limits.hpp).
double parse_bandwidth(std::string_view text);

/// Parses a duration such as "1.5us", "600ns", "2 ms" into picoseconds (rounded to nearest). Units: ps, ns,
/// us (or µs), ms, s. Throws ValueError.
Picoseconds parse_duration(std::string_view text);

/// "450 GB/s" style, decimal GB (1e9 bytes), 3 significant digits, for people.
std::string format_bandwidth(double bytes_per_second);
/// "1.50 us" style, for people.
std::string format_duration(Picoseconds ps);
/// "24 MiB" / "1000 B" style: binary units when exact, else bytes.
std::string format_size(std::uint64_t bytes);

/// GB/s (1e9 bytes per second), the unit of every *_gbps field commsim writes, as nccl-tests uses.
inline double to_gbps(double bytes_per_second) {
  return bytes_per_second / 1e9;
}

}  // namespace commsim
