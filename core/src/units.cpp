// Parsing and formatting of sizes, bandwidths and durations with mandatory units.
#include "commsim/core/units.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <utility>

#include "commsim/core/error.hpp"
#include "commsim/core/limits.hpp"

namespace commsim {
namespace {

struct UnitEntry {
  std::string_view name;
  double factor;
};

constexpr std::array kSizeUnits{
    UnitEntry{"B", 1.0},         UnitEntry{"KB", 1e3},           UnitEntry{"MB", 1e6},
    UnitEntry{"GB", 1e9},        UnitEntry{"TB", 1e12},          UnitEntry{"KiB", 1024.0},
    UnitEntry{"MiB", 1048576.0}, UnitEntry{"GiB", 1073741824.0}, UnitEntry{"TiB", 1099511627776.0},
};

constexpr std::array kBandwidthUnits{
    UnitEntry{"Bps", 1.0},         UnitEntry{"KBps", 1e3},
    UnitEntry{"MBps", 1e6},        UnitEntry{"GBps", 1e9},
    UnitEntry{"TBps", 1e12},       UnitEntry{"KiBps", 1024.0},
    UnitEntry{"MiBps", 1048576.0}, UnitEntry{"GiBps", 1073741824.0},
    UnitEntry{"B/s", 1.0},         UnitEntry{"KB/s", 1e3},
    UnitEntry{"MB/s", 1e6},        UnitEntry{"GB/s", 1e9},
    UnitEntry{"TB/s", 1e12},       UnitEntry{"KiB/s", 1024.0},
    UnitEntry{"MiB/s", 1048576.0}, UnitEntry{"GiB/s", 1073741824.0},
    UnitEntry{"bps", 0.125},       UnitEntry{"Kbps", 125.0},
    UnitEntry{"Mbps", 125e3},      UnitEntry{"Gbps", 125e6},
    UnitEntry{"Tbps", 125e9},      UnitEntry{"b/s", 0.125},
    UnitEntry{"Kb/s", 125.0},      UnitEntry{"Mb/s", 125e3},
    UnitEntry{"Gb/s", 125e6},      UnitEntry{"Tb/s", 125e9},
};

constexpr std::array kDurationUnits{
    UnitEntry{"ps", 1.0},        UnitEntry{"ns", 1e3}, UnitEntry{"us", 1e6},
    UnitEntry{"\xC2\xB5s", 1e6}, UnitEntry{"ms", 1e9}, UnitEntry{"s", 1e12},
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

template <std::size_t N>
std::string unit_list(const std::array<UnitEntry, N>& units) {
  std::string out;
  for (const auto& u : units) {
    if (!out.empty()) out += ", ";
    out += u.name;
  }
  return out;
}

/// Splits "12.5GiB" into (12.5, "GiB") and converts with the unit table; returns value x factor.
template <std::size_t N>
double parse_quantity(std::string_view text, const std::array<UnitEntry, N>& units, const char* kind) {
  const std::string_view s = trim(text);
  if (s.empty())
    throw ValueError(std::string("empty ") + kind + " (expected a number with a unit, e.g. " +
                     std::string(units[3].name) + ")");
  std::size_t i = 0;
  if (s[i] == '+' || s[i] == '-') ++i;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E') && i + 1 < s.size() &&
      (std::isdigit(static_cast<unsigned char>(s[i + 1])) || s[i + 1] == '-' || s[i + 1] == '+')) {
    ++i;
    if (s[i] == '-' || s[i] == '+') ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  }
  const std::string number(s.substr(0, i));
  const std::string_view unit = trim(s.substr(i));
  double value = 0.0;
  const char* first = number.data();
  if (!number.empty() && number[0] == '+') ++first;
  auto [ptr, ec] = std::from_chars(first, number.data() + number.size(), value);
  if (number.empty() || ec != std::errc() || ptr != number.data() + number.size()) {
    throw ValueError("'" + std::string(s) + "' is not a " + kind +
                     ": expected a number followed by a unit (" + unit_list(units) + ")");
  }
  if (!std::isfinite(value)) throw ValueError("'" + std::string(s) + "' is not a finite " + kind);
  if (value < 0) throw ValueError(std::string(kind) + " '" + std::string(s) + "' is negative");
  if (unit.empty()) {
    throw ValueError(std::string(kind) + " '" + std::string(s) +
                     "' has no unit; write it with one of: " + unit_list(units));
  }
  for (const auto& u : units) {
    if (u.name == unit) return value * u.factor;
  }
  throw ValueError("unknown " + std::string(kind) + " unit '" + std::string(unit) + "' in '" +
                   std::string(s) + "'; valid units: " + unit_list(units));
}

}  // namespace

std::uint64_t parse_size(std::string_view text) {
  const double bytes = parse_quantity(text, kSizeUnits, "size");
  if (bytes >= 9.2e18)
    throw ValueError("size '" + std::string(trim(text)) + "' overflows 64-bit byte counts");
  const double rounded = std::round(bytes);
  if (std::fabs(bytes - rounded) > 1e-6 * std::max(1.0, bytes)) {
    throw ValueError("size '" + std::string(trim(text)) + "' is not a whole number of bytes");
  }
  return static_cast<std::uint64_t>(rounded);
}

double parse_bandwidth(std::string_view text) {
  const double bps = parse_quantity(text, kBandwidthUnits, "bandwidth");
  if (bps <= 0) throw ValueError("bandwidth '" + std::string(trim(text)) + "' must be positive");
  check_bandwidth(bps, "bandwidth '" + std::string(trim(text)) + "' =");
  return bps;
}

Picoseconds parse_duration(std::string_view text) {
  const double ps = parse_quantity(text, kDurationUnits, "duration");
  if (ps >= 9.2e18)
    throw ValueError("duration '" + std::string(trim(text)) + "' overflows 64-bit picoseconds");
  return static_cast<Picoseconds>(std::llround(ps));
}

std::string format_bandwidth(double bytes_per_second) {
  char buf[64];
  const double gb = bytes_per_second / 1e9;
  if (gb >= 100) {
    std::snprintf(buf, sizeof buf, "%.0f GB/s", gb);
  } else if (gb >= 10) {
    std::snprintf(buf, sizeof buf, "%.1f GB/s", gb);
  } else if (gb >= 0.01) {
    std::snprintf(buf, sizeof buf, "%.2f GB/s", gb);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g MB/s", bytes_per_second / 1e6);
  }
  return buf;
}

std::string format_duration(Picoseconds ps) {
  char buf[64];
  const double v = static_cast<double>(ps);
  if (ps < kPicosPerNano) {
    std::snprintf(buf, sizeof buf, "%lld ps", static_cast<long long>(ps));
  } else if (ps < kPicosPerMicro) {
    std::snprintf(buf, sizeof buf, "%.3g ns", v / 1e3);
  } else if (ps < 1000 * kPicosPerMicro) {
    std::snprintf(buf, sizeof buf, "%.3g us", v / 1e6);
  } else if (ps < kPicosPerSecond) {
    std::snprintf(buf, sizeof buf, "%.3g ms", v / 1e9);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g s", v / 1e12);
  }
  return buf;
}

std::string format_size(std::uint64_t bytes) {
  static constexpr std::array<std::pair<std::uint64_t, const char*>, 4> kUnits{
      {{1ULL << 40, "TiB"}, {1ULL << 30, "GiB"}, {1ULL << 20, "MiB"}, {1ULL << 10, "KiB"}}};
  for (const auto& [factor, name] : kUnits) {
    if (bytes >= factor && bytes % factor == 0) return std::to_string(bytes / factor) + " " + name;
  }
  return std::to_string(bytes) + " B";
}

}  // namespace commsim
