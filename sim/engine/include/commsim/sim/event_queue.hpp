// Deterministic discrete-event queue: integer-picosecond times, ties broken by insertion order.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "commsim/core/limits.hpp"
#include "commsim/core/units.hpp"

namespace commsim::sim {

class EventQueue {
 public:
  using Action = std::function<void()>;
  /// An event's name for the tag handler (at_tagged): below 2^63.
  using Tag = std::uint64_t;
  using TagHandler = std::function<void(Tag)>;

  /// Schedules `action` at absolute time `when` (ps, >= now()). Equal times run in insertion order. Throws
  /// ValueError past kMaxSimulatedTime.
  void at(Picoseconds when, Action action);
  /// Schedules `action` `delay` ps from now (checked against overflow and kMaxSimulatedTime).
  void after(Picoseconds delay, Action action);
  /// The same for an event that runs the tag handler with `tag` (< 2^63): no Action is stored, so a million
  /// pending events keep 24 bytes each instead of 56. Equal times still run in insertion order, whichever
  /// kind.
  void at_tagged(Picoseconds when, Tag tag);
  void after_tagged(Picoseconds delay, Tag tag);
  void set_tag_handler(TagHandler handler) { tag_handler_ = std::move(handler); }
  /// Bounds on work (a would-be hang becomes a ValueError): events in all (default kMaxEvents), and events
  /// in a row without simulated time advancing (default 100 million).
  void set_limits(std::uint64_t max_events, std::uint64_t max_events_at_one_time) {
    max_events_ = max_events;
    max_events_at_one_time_ = max_events_at_one_time;
  }
  /// Runs events until none is left. Returns the number of events run. Throws ValueError past the limits.
  std::uint64_t run();
  /// The same, calling `poll` every `every` events; when it returns false the run stops with events still
  /// queued (the caller abandons the simulation).
  std::uint64_t run(const std::function<bool()>& poll, std::uint64_t every);
  Picoseconds now() const { return now_; }
  bool empty() const { return heap_.empty() && open_ == 0; }
  std::uint64_t events_run() const { return events_run_; }

 private:
  struct Event {
    Picoseconds when;
    std::uint64_t seq;
    std::uint64_t
        payload;  ///< the tag, kActionBit | the Action's slot in actions_, or kRunBits | a run's slot
  };
  static constexpr std::uint64_t kActionBit = std::uint64_t{1} << 63;
  /// A run: events scheduled for the same time while their run is open (a million transfers matched at one
  /// instant start together) are one heap entry holding their payloads in order, keyed by the first one's
  /// sequence number. Every event for that time scheduled while the run is open joins it, so no other event
  /// of that time sorts between its members, and running them in order is insertion order. Up to kStages runs
  /// (of different times) are open at once; all are closed into the heap before an event runs.
  static constexpr std::uint64_t kRunBits = kActionBit | std::uint64_t{1} << 62;
  void push(Picoseconds when, std::uint64_t payload);
  struct Stage {
    Picoseconds when = 0;
    std::uint64_t seq = 0;                ///< the first event's sequence number
    std::vector<std::uint64_t> payloads;  ///< in insertion order
  };
  static constexpr int kStages = 4;
  /// Puts `st`'s events into the heap (one entry, or a run) and empties it.
  void close_stage(Stage& st);
  void close_stages();
  /// Runs one event's payload at `when`, within the limits on work.
  void dispatch(Picoseconds when, std::uint64_t payload);
  void check_time(Picoseconds when) const;
  Picoseconds checked_after(Picoseconds delay) const;
  TagHandler tag_handler_;
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.when != b.when ? a.when > b.when : a.seq > b.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  std::vector<Action> actions_;
  std::vector<std::size_t> free_slots_;
  Stage stages_[kStages];  ///< open runs, the first open_ of them, oldest first
  int open_ = 0;
  std::vector<std::vector<std::uint64_t>> runs_;
  std::vector<std::size_t> free_runs_;
  Picoseconds now_ = 0;
  std::uint64_t seq_ = 0;
  std::uint64_t events_run_ = 0;
  std::uint64_t events_at_now_ = 0;  ///< events run in a row at now_
  std::uint64_t max_events_ = kMaxEvents;
  std::uint64_t max_events_at_one_time_ = 100000000;
};

}  // namespace commsim::sim
