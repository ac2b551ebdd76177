// Chrome trace-event output (opens in Perfetto and chrome://tracing): kernel spans per GPU and stream, link
// load.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commsim/core/units.hpp"

namespace commsim::sim {

class Trace {
 public:
  /// A span on GPU `gpu`, track `track` (a stream, or a transfer lane).
  void span(int gpu, const std::string& track, const std::string& name, Picoseconds begin, Picoseconds end,
            nlohmann::json args = nlohmann::json::object());
  /// A counter sample: the utilisation (0..100 %) of a link from `when` on.
  void counter(const std::string& link, Picoseconds when, double percent);
  /// Names GPU processes in the viewer.
  void name_gpu(int gpu, const std::string& name);
  /// The whole document: {"traceEvents": [...], "displayTimeUnit": "ns"}. Timestamps are microseconds.
  nlohmann::json to_json() const;
  std::size_t size() const { return events_.size(); }
  /// Added to every later timestamp, so that consecutive runs of a sweep follow one another.
  void set_offset(Picoseconds offset) { offset_ = offset; }
  Picoseconds offset() const { return offset_; }

 private:
  int tid(int gpu, const std::string& track);
  std::vector<nlohmann::json> events_;
  Picoseconds offset_ = 0;
  std::vector<std::pair<std::pair<int, std::string>, int>> tracks_;
  std::vector<std::pair<int, std::string>> gpu_names_;
};

}  // namespace commsim::sim
