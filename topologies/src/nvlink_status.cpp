// Parsing `nvidia-smi nvlink -s`: GPU headers and per-link speeds.
#include "commsim/topo/nvlink_status.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "commsim/core/error.hpp"
#include "commsim/core/limits.hpp"
#include "commsim/core/text.hpp"

namespace commsim::topo {
namespace {

constexpr const char* kWhat = "`nvidia-smi nvlink -s` output";

std::string_view ltrim(std::string_view s, int& col) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
    s.remove_prefix(1);
    ++col;
  }
  return s;
}

bool parse_uint(std::string_view s, int& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() && v >= 0;
}

}  // namespace

int NvlinkGpuStatus::active_links() const {
  return static_cast<int>(std::count_if(link_rate.begin(), link_rate.end(), [](double r) { return r > 0; }));
}

NvlinkStatus parse_nvlink_status(std::string_view text, const std::string& file) {
  text = strip_utf8_bom(text);  // a byte-order mark (Windows editors) is accepted
  require_text(text, file, kWhat);
  NvlinkStatus out;
  out.file = file;
  for (const Line& line : split_lines(text)) {
    int col = 1;
    std::string_view s = ltrim(line.text, col);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    if (s.empty()) continue;
    const SourceLocation at{file, line.number, col};
    if (s.rfind("GPU ", 0) == 0) {
      const auto colon = s.find(':');
      int index = 0;
      if (colon == std::string_view::npos || !parse_uint(s.substr(4, colon - 4), index)) {
        throw InputError(at, "expected 'GPU <index>: <name> (UUID: <uuid>)'");
      }
      if (index != static_cast<int>(out.gpus.size())) {
        throw InputError(at, "GPU " + std::to_string(index) + " out of order; expected GPU " +
                                 std::to_string(out.gpus.size()));
      }
      NvlinkGpuStatus g;
      g.index = index;
      g.line = line.number;
      std::string_view rest = s.substr(colon + 1);
      int dummy = 0;
      rest = ltrim(rest, dummy);
      const auto paren = rest.rfind(" (UUID:");
      if (paren != std::string_view::npos) {
        g.name = std::string(rest.substr(0, paren));
        std::string_view uuid = rest.substr(paren + 7);
        uuid = ltrim(uuid, dummy);
        if (!uuid.empty() && uuid.back() == ')') uuid.remove_suffix(1);
        g.uuid = std::string(uuid);
      } else {
        g.name = std::string(rest);
      }
      if (g.name.empty()) throw InputError(at, "GPU header without a name");
      out.gpus.push_back(std::move(g));
      continue;
    }
    if (s.rfind("Link ", 0) == 0) {
      if (out.gpus.empty()) throw InputError(at, "link line before any 'GPU n:' header");
      const auto colon = s.find(':');
      int link = 0;
      if (colon == std::string_view::npos || !parse_uint(s.substr(5, colon - 5), link)) {
        throw InputError(at, "expected 'Link <n>: <speed> GB/s' or 'Link <n>: <inactive>'");
      }
      auto& rates = out.gpus.back().link_rate;
      if (link != static_cast<int>(rates.size())) {
        throw InputError(at, "link " + std::to_string(link) + " out of order; expected link " +
                                 std::to_string(rates.size()));
      }
      if (link >= 64) throw InputError(at, "more than 64 NVLinks on one GPU");
      int vcol = col + static_cast<int>(colon) + 1;
      std::string_view value = ltrim(s.substr(colon + 1), vcol);
      if (value == "<inactive>") {
        rates.push_back(0.0);
        continue;
      }
      const auto unit = value.find(" GB/s");
      double gbps = 0;
      auto [p, ec] =
          std::from_chars(value.data(), value.data() + (unit == std::string_view::npos ? 0 : unit), gbps);
      if (unit == std::string_view::npos || ec != std::errc() || p != value.data() + unit ||
          unit + 5 != value.size() || !(gbps > 0) || gbps > 10000) {
        throw InputError({file, line.number, vcol}, "bad link speed '" + std::string(value) +
                                                        "'; expected e.g. '26.562 GB/s' or '<inactive>'");
      }
      rates.push_back(gbps * 1e9);
      continue;
    }
    throw InputError(
        at, "unrecognised line; expected 'GPU n: ...' or 'Link n: ...' as printed by " + std::string(kWhat));
  }
  if (out.gpus.empty()) throw InputError({file, 1, 1}, "no 'GPU n:' lines; expected " + std::string(kWhat));
  return out;
}

}  // namespace commsim::topo
