// The documented range of the simulator (largest size, time, bandwidth range, work bounds) and checked
// arithmetic.
#pragma once

#include <cstddef>
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
/// The most points one sweep may have (the product of its axes, computed without overflow). Every point's row
/// is held until the sweep is written, so the limit keeps a sweep's memory well under 1 GB.
inline constexpr std::size_t kMaxSweepPoints = 1000000;
/// The most GPUs (or ranks) one measured run may name (the simulator's tested scale is 16,384 GPUs).
inline constexpr int kMaxGpus = 1 << 16;
/// The largest input file any commsim tool reads, in bytes: 64 MiB (the largest measured file in the
/// repository is about 2 MiB). Every input (topologies, what-if TOML and the files it names, parameters,
/// sweep specs, measured logs and JSON) is read by read_file, which refuses larger files and anything that is
/// not a regular file (devices such as /dev/urandom, FIFOs, sockets) before reading a byte.
inline constexpr std::uint64_t kMaxInputFileBytes = 64ULL << 20;
/// The most devices (GPU and NIC columns) one `nvidia-smi topo -m` matrix may have. One machine has at most
/// a few dozen; a header with more is refused before any cell is stored (the cells grow as its square).
inline constexpr int kMaxMatrixDevices = 1024;
/// The most configurations one commsim-measure plan may have (a dry run included), counted before any is
/// built: each holds its workload's flags (about 2 KB), so the plan stays well under 1 GB.
inline constexpr std::uint64_t kMaxPlanConfigs = 100000;
/// The most GPU entries (the sum over configurations of their GPU lists) one commsim-measure plan may hold.
inline constexpr std::uint64_t kMaxPlanGpuEntries = 1ULL << 24;
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
