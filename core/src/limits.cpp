// Range checks against the simulator's documented limits, and overflow-checked arithmetic.
#include "commsim/core/limits.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include "commsim/core/error.hpp"

namespace commsim {
namespace {

std::string number_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

void check_size(std::uint64_t bytes, std::string_view what) {
  if (bytes > kMaxBytes) {
    throw ValueError(std::string(what) + " " + std::to_string(bytes) +
                     " B is larger than the largest size commsim simulates (" + format_size(kMaxBytes) + ")");
  }
}

void check_bandwidth(double bytes_per_second, std::string_view what) {
  if (!std::isfinite(bytes_per_second) || bytes_per_second < kMinBandwidth ||
      bytes_per_second > kMaxBandwidth) {
    throw ValueError(std::string(what) + " " + number_text(bytes_per_second) +
                     " B/s is outside the range commsim simulates (1 MB/s to 1 PB/s)");
  }
}

std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, std::string_view what) {
  std::uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw ValueError(std::string(what) + " overflows 64 bits");
  return r;
}

std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, std::string_view what) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw ValueError(std::string(what) + " overflows 64 bits");
  return r;
}

Picoseconds checked_add(Picoseconds a, Picoseconds b, std::string_view what) {
  Picoseconds r = 0;
  if (__builtin_add_overflow(a, b, &r) || r > kMaxSimulatedTime)
    throw ValueError(std::string(what) + " exceeds the largest simulated time (2^62 ps, about 53 days)");
  return r;
}

Picoseconds checked_mul(Picoseconds a, std::int64_t b, std::string_view what) {
  Picoseconds r = 0;
  if (__builtin_mul_overflow(a, b, &r) || r > kMaxSimulatedTime)
    throw ValueError(std::string(what) + " exceeds the largest simulated time (2^62 ps, about 53 days)");
  return r;
}

Picoseconds seconds_to_picoseconds(double seconds, std::string_view what) {
  if (!std::isfinite(seconds)) throw ValueError(std::string(what) + " is not a finite time");
  if (seconds < 0) throw ValueError(std::string(what) + " is negative");
  const double ps = std::round(seconds * 1e12);
  if (ps > static_cast<double>(kMaxSimulatedTime))
    throw ValueError(std::string(what) + " exceeds the largest simulated time (2^62 ps, about 53 days)");
  return static_cast<Picoseconds>(ps);
}

std::string_view strip_utf8_bom(std::string_view text) {
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  return text;
}

}  // namespace commsim
