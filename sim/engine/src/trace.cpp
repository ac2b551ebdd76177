// Chrome trace-event JSON: complete events ("X"), counters ("C") and process/thread names ("M").
#include "commsim/sim/trace.hpp"

namespace commsim::sim {
namespace {
constexpr int kLinkPid = 1000000;  // the process that holds link counters
double us(Picoseconds t) {
  return static_cast<double>(t) / 1e6;
}
}  // namespace

int Trace::tid(int gpu, const std::string& track) {
  for (const auto& [key, id] : tracks_) {
    if (key.first == gpu && key.second == track) return id;
  }
  const int id = static_cast<int>(tracks_.size()) + 1;
  tracks_.push_back({{gpu, track}, id});
  return id;
}

void Trace::span(int gpu, const std::string& track, const std::string& name, Picoseconds begin,
                 Picoseconds end, nlohmann::json args) {
  events_.push_back({{"name", name},
                     {"ph", "X"},
                     {"pid", gpu},
                     {"tid", tid(gpu, track)},
                     {"ts", us(begin + offset_)},
                     {"dur", us(end - begin)},
                     {"args", std::move(args)}});
}

void Trace::counter(const std::string& link, Picoseconds when, double percent) {
  events_.push_back({{"name", link},
                     {"ph", "C"},
                     {"pid", kLinkPid},
                     {"ts", us(when + offset_)},
                     {"args", {{"utilisation_percent", percent}}}});
}

void Trace::name_gpu(int gpu, const std::string& name) {
  gpu_names_.push_back({gpu, name});
}

nlohmann::json Trace::to_json() const {
  nlohmann::json events = nlohmann::json::array();
  for (const auto& [gpu, name] : gpu_names_) {
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", gpu}, {"args", {{"name", name}}}});
    events.push_back(
        {{"name", "process_sort_index"}, {"ph", "M"}, {"pid", gpu}, {"args", {{"sort_index", gpu}}}});
  }
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", kLinkPid}, {"args", {{"name", "links"}}}});
  for (const auto& [key, id] : tracks_) {
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", key.first},
                      {"tid", id},
                      {"args", {{"name", key.second}}}});
  }
  for (const auto& e : events_) events.push_back(e);
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}};
}

}  // namespace commsim::sim
