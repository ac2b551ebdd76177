// Command-line sizes, size sweeps and GPU lists: one parser for every tool.
#include "commsim/core/args.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>

#include "commsim/core/error.hpp"
#include "commsim/core/limits.hpp"
#include "commsim/core/units.hpp"

namespace commsim {

std::uint64_t parse_size_flag(const std::string& flag, const std::string& value) {
  std::uint64_t v = 0;
  try {
    v = parse_size(value);
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

}  // namespace commsim
