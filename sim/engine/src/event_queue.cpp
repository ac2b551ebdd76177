// Deterministic event queue implementation.
#include "commsim/sim/event_queue.hpp"

#include <string>

#include "commsim/core/error.hpp"
#include "commsim/core/limits.hpp"

namespace commsim::sim {

void EventQueue::check_time(Picoseconds when) const {
  if (when > kMaxSimulatedTime) {
    throw ValueError(
        "simulated time would pass the largest simulated time (2^62 ps, about 53 days): a size, "
        "bandwidth or duration is outside the range commsim simulates");
  }
  if (when < now_) throw Error("event scheduled in the past");
}

void EventQueue::at_tagged(Picoseconds when, Tag tag) {
  check_time(when);
  if (tag & kActionBit) throw Error("an event's tag must be below 2^63");
  if (!tag_handler_) throw Error("a tagged event needs a tag handler");
  heap_.push({when, seq_++, tag});
}

void EventQueue::after_tagged(Picoseconds delay, Tag tag) {
  at_tagged(checked_after(delay), tag);
}

void EventQueue::at(Picoseconds when, Action action) {
  check_time(when);
  std::size_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
    actions_[slot] = std::move(action);
  } else {
    slot = actions_.size();
    actions_.push_back(std::move(action));
  }
  heap_.push({when, seq_++, kActionBit | slot});
}

std::uint64_t EventQueue::run() {
  return run(nullptr, 0);
}

Picoseconds EventQueue::checked_after(Picoseconds delay) const {
  if (delay < 0 || delay > kMaxSimulatedTime - now_) {
    throw ValueError("an event " + std::to_string(delay) +
                     " ps ahead would pass the largest simulated time (2^62 ps, about 53 days) or lie in the "
                     "past: a size, bandwidth or duration is outside the range commsim simulates");
  }
  return now_ + delay;
}

void EventQueue::after(Picoseconds delay, Action action) {
  at(checked_after(delay), std::move(action));
}

std::uint64_t EventQueue::run(const std::function<bool()>& poll, std::uint64_t every) {
  std::uint64_t n = 0;
  while (!heap_.empty()) {
    if (poll && every > 0 && n % every == 0 && !poll()) break;
    const Event e = heap_.top();
    heap_.pop();
    if (e.when == now_) {
      if (++events_at_now_ > max_events_at_one_time_) {
        throw ValueError("the simulation ran " + std::to_string(max_events_at_one_time_) +
                         " events without simulated time advancing (at " + std::to_string(now_) +
                         " ps): stopped as a would-be hang");
      }
    } else {
      events_at_now_ = 0;
    }
    if (events_run_ >= max_events_) {
      throw ValueError("the simulation passed " + std::to_string(max_events_) +
                       " events: stopped as a would-be hang (the workload is too large to simulate)");
    }
    now_ = e.when;
    ++events_run_;
    if (e.payload & kActionBit) {
      const auto slot = static_cast<std::size_t>(e.payload & ~kActionBit);
      Action a = std::move(actions_[slot]);
      free_slots_.push_back(slot);
      a();
    } else {
      tag_handler_(e.payload);
    }
    ++n;
  }
  return n;
}

}  // namespace commsim::sim
