// The documented range of the simulator (largest size, time, bandwidth range, work bounds) and checked
// arithmetic.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "commsim/core/units.hpp"

namespace commsim {

/// The largest message, buffer or model size commsim simulates, in bytes: 4 TiB (2^42). Larger sizes are
/// refused before simulating (a size of thousands of TiB would overflow simulated time at slow links).
inline constexpr std::uint64_t kMaxBytes = 1ULL << 42;
/// The largest simulated time, in picoseconds: 2^62 ps, about 53 days. The engine refuses to schedule past
/// it.
inline constexpr Picoseconds kMaxSimulatedTime = Picoseconds{1} << 62;
/// The slowest link bandwidth commsim accepts, in bytes per second (1 MB/s): kMaxBytes at this rate still
/// fits in kMaxSimulatedTime.
inline constexpr double kMinBandwidth = 1e6;
/// The fastest link bandwidth commsim accepts, in bytes per second (1 PB/s).
inline constexpr double kMaxBandwidth = 1e15;
/// The most steps a size sweep (min, min*factor, ... max) may take, counting sizes that round to the same
/// byte count.
inline constexpr std::uint64_t kMaxSweepSteps = 1000000;
/// The most GPUs (or ranks) one measured run may name (the simulator's tested scale is 16,384 GPUs).
inline constexpr int kMaxGpus = 1 << 16;
/// The most events one simulation may run before it is stopped as a would-be hang.
inline constexpr std::uint64_t kMaxEvents = 1000000000ULL;

/// Throws ValueError when `bytes` exceeds kMaxBytes; `what` names the value ("--max-bytes", "size").
void check_size(std::uint64_t bytes, std::string_view what);
/// Throws ValueError unless `bytes_per_second` is finite and within [kMinBandwidth, kMaxBandwidth].
void check_bandwidth(double bytes_per_second, std::string_view what);

/// a + b, a * b for byte counts and simulated times; throw ValueError naming `what` on overflow.
std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, std::string_view what);
std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, std::string_view what);
Picoseconds checked_add(Picoseconds a, Picoseconds b, std::string_view what);
Picoseconds checked_mul(Picoseconds a, std::int64_t b, std::string_view what);

/// A duration in seconds as picoseconds (rounded); throws ValueError naming `what` when it is not finite,
/// negative or beyond kMaxSimulatedTime.
Picoseconds seconds_to_picoseconds(double seconds, std::string_view what);

/// `text` without a leading UTF-8 byte-order mark (EF BB BF); the mark is accepted, never required.
std::string_view strip_utf8_bom(std::string_view text);

}  // namespace commsim
