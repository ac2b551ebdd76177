// Command-line sizes, size sweeps and GPU lists: one parser for every tool.
#include "commsim/core/args.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>

#include "commsim/core/error.hpp"
#include "commsim/core/limits.hpp"
#include "commsim/core/units.hpp"

namespace commsim {

namespace {

/// The length of the leading number of `s`: "128" of "128M", "1.5e3" of "1.5e3us".
std::size_t number_length(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  if (i + 1 < s.size() && (s[i] == 'e' || s[i] == 'E') &&
      (std::isdigit(static_cast<unsigned char>(s[i + 1])) || s[i + 1] == '-' || s[i + 1] == '+'))
    for (i += 2; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]));) ++i;
  return i;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

constexpr const char* kCliSizeUnits =
    "a bare number is bytes (8); K, M, G, T are powers of 1024 as in nccl-tests (128M); KB, MB, GB, TB "
    "powers of 1000; KiB, MiB, GiB, TiB powers of 1024; B bytes";

}  // namespace

std::uint64_t parse_cli_size(std::string_view text) {
  const std::string_view s = trim(text);
  const std::size_t n = number_length(s);
  const std::string_view unit = trim(s.substr(n));
  std::string canonical;  // the same size in parse_size's spelling
  if (n == 0) {
    canonical = std::string(s);  // not a number: parse_size says why
  } else if (unit.empty()) {
    canonical = std::string(s.substr(0, n)) + "B";
  } else if (unit.size() == 1 && std::string_view("KMGTkmgt").find(unit[0]) != std::string_view::npos) {
    canonical = std::string(s.substr(0, n)) +
                static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0]))) + "iB";
  } else {
    canonical = std::string(s);
  }
  try {
    return parse_size(canonical);
  } catch (const ValueError& e) {
    const std::string why = e.what();
    if (why.find("unit") == std::string::npos && why.find("not a size") == std::string::npos) {
      // negative, fractional or overflowing: say it with the text as written
      std::string msg = why;
      if (const auto at = msg.find("'" + canonical + "'"); at != std::string::npos && canonical != s)
        msg.replace(at, canonical.size() + 2, "'" + std::string(s) + "'");
      throw ValueError(msg);
    }
    throw ValueError("'" + std::string(s) + "' is not a size: " + kCliSizeUnits);
  }
}

double parse_time_flag(const std::string& flag, const std::string& value, std::string_view unit) {
  std::string_view s = trim(value);
  // A minus sign is kept for the caller's range check to report ("--fwd-us must be between ...").
  const bool negative = !s.empty() && s.front() == '-';
  if (negative) s.remove_prefix(1);
  const double sign = negative ? -1.0 : 1.0;
  const std::size_t n = number_length(s);
  Picoseconds per_unit = 0;
  Picoseconds ps = 0;
  try {
    per_unit = parse_duration("1" + std::string(unit));
    if (n > 0 && n == s.size()) {  // a bare number: the flag's own unit
      double v = 0;
      const std::string number(s.front() == '+' ? s.substr(1) : s);
      const auto [p, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
      if (ec != std::errc() || p != number.data() + number.size())
        throw ValueError("'" + std::string(s) + "' is not a number");
      if (!std::isfinite(v) || v * static_cast<double>(per_unit) >= 9.2e18)
        throw ValueError("duration '" + std::string(s) + "' overflows 64-bit picoseconds");
      return sign * v;
    }
    ps = parse_duration(s);
  } catch (const ValueError& e) {
    throw UsageError(flag + " " + value + ": " + e.what() + " (a bare number is in " + std::string(unit) +
                     ")");
  }
  return sign * static_cast<double>(ps) / static_cast<double>(per_unit);
}

std::uint64_t parse_size_flag(const std::string& flag, const std::string& value) {
  std::uint64_t v = 0;
  try {
    v = parse_cli_size(value);
  } catch (const ValueError& e) {
    throw UsageError(flag + " " + value + ": " + e.what());
  }
  if (v == 0) throw UsageError(flag + " " + value + ": a size must be at least 1B");
  try {
    check_size(v, "the size");
  } catch (const ValueError& e) {
    throw UsageError(flag + " " + value + ": " + e.what());
  }
  return v;
}

std::vector<std::uint64_t> size_sweep(std::uint64_t min_bytes, std::uint64_t max_bytes, double factor) {
  if (min_bytes == 0) throw UsageError("--min-bytes must be at least 1B");
  if (max_bytes < min_bytes) throw UsageError("--max-bytes is smaller than --min-bytes");
  if (!(factor > 1.0) || !std::isfinite(factor)) throw UsageError("--factor must be a number greater than 1");
  if (max_bytes > kMaxBytes) {
    throw UsageError("--max-bytes " + std::to_string(max_bytes) +
                     " B is larger than the largest size commsim " + "simulates (" + format_size(kMaxBytes) +
                     ")");
  }
  // Count the steps first: a factor barely above 1 would otherwise loop for hours on sizes that round alike.
  const double steps =
      std::log(static_cast<double>(max_bytes) / static_cast<double>(min_bytes)) / std::log(factor);
  if (!(steps <= static_cast<double>(kMaxSweepSteps))) {
    char text[32];
    std::snprintf(text, sizeof text, "%.12g", factor);
    throw UsageError("--factor " + std::string(text) + " from " + format_size(min_bytes) + " to " +
                     format_size(max_bytes) + " takes more than " + std::to_string(kMaxSweepSteps) +
                     " steps; raise --factor");
  }
  std::vector<std::uint64_t> out;
  double s = static_cast<double>(min_bytes);
  while (s <= static_cast<double>(max_bytes) * (1 + 1e-12)) {
    const auto b = static_cast<std::uint64_t>(std::llround(s));
    if (out.empty() || b != out.back()) out.push_back(b);
    s *= factor;
    if (out.size() > 100000) throw UsageError("the size sweep has more than 100000 sizes; raise --factor");
  }
  return out;
}

std::vector<int> parse_gpu_list(std::string_view spec, int gpu_count) {
  std::vector<int> out;
  std::string s(spec);
  if (s == "all") {
    for (int i = 0; i < gpu_count; ++i) out.push_back(i);
    return out;
  }
  auto bad = [&](const std::string& why) {
    return UsageError("GPU list '" + s + "': " + why + " (write e.g. 0-3, 0,2,5 or all)");
  };
  auto number = [&](std::string_view t) {
    int v = 0;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc() || p != t.data() + t.size())
      throw bad("'" + std::string(t) + "' is not a GPU index");
    if (v < 0 || v >= gpu_count) {
      throw UsageError("GPU " + std::string(t) + " is not in the topology, which has GPUs 0-" +
                       std::to_string(gpu_count - 1));
    }
    return v;
  };
  std::set<int> seen;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    const std::string_view item = std::string_view(s).substr(start, end - start);
    const auto dash = item.find('-');
    int lo, hi;
    if (dash == std::string_view::npos) {
      lo = hi = number(item);
    } else {
      lo = number(item.substr(0, dash));
      hi = number(item.substr(dash + 1));
      if (hi < lo) throw bad("range " + std::string(item) + " runs backwards");
    }
    for (int g = lo; g <= hi; ++g) {
      if (!seen.insert(g).second) throw bad("GPU " + std::to_string(g) + " is listed twice");
      out.push_back(g);
    }
    start = end + 1;
  }
  return out;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string closest_name(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = static_cast<std::size_t>(-1);
  for (const std::string& c : candidates) {
    // Levenshtein distance, one row at a time.
    std::vector<std::size_t> row(c.size() + 1);
    for (std::size_t j = 0; j <= c.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= word.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= c.size(); ++j) {
        const std::size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (word[i - 1] == c[j - 1] ? 0 : 1)});
        diagonal = up;
      }
    }
    if (row[c.size()] < best_distance) {
      best_distance = row[c.size()];
      best = c;
    }
  }
  const std::size_t longer = std::max(word.size(), best.size());
  if (best.empty() || best_distance == 0 || best_distance > 3 || best_distance * 3 > longer) return "";
  return best;
}

}  // namespace commsim
