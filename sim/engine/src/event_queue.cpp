// Deterministic event queue implementation.
#include "commsim/sim/event_queue.hpp"

#include <string>
#include <utility>

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
  push(when, tag);
}

void EventQueue::push(Picoseconds when, std::uint64_t payload) {
  for (int i = 0; i < open_; ++i) {
    if (stages_[i].when == when) {
      stages_[i].payloads.push_back(payload);
      ++seq_;
      return;
    }
  }
  if (open_ == kStages) {  // close the oldest
    close_stage(stages_[0]);
    for (int i = 1; i < kStages; ++i) std::swap(stages_[i - 1], stages_[i]);
    --open_;
  }
  Stage& st = stages_[open_++];
  st.when = when;
  st.seq = seq_++;
  st.payloads.push_back(payload);
}

void EventQueue::close_stage(Stage& st) {
  if (st.payloads.size() == 1) {
    heap_.push({st.when, st.seq, st.payloads.front()});
    st.payloads.clear();
    return;
  }
  std::size_t slot;
  if (!free_runs_.empty()) {
    slot = free_runs_.back();
    free_runs_.pop_back();
  } else {
    slot = runs_.size();
    runs_.emplace_back();
  }
  runs_[slot].swap(st.payloads);  // a free slot is empty: the stage starts empty again
  heap_.push({st.when, st.seq, kRunBits | slot});
}

void EventQueue::close_stages() {
  for (int i = 0; i < open_; ++i) close_stage(stages_[i]);
  open_ = 0;
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
  push(when, kActionBit | slot);
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
  // Asked before each event, while it is still queued: a stopped run leaves its events in the queue.
  const auto stop = [&] { return poll && every > 0 && n % every == 0 && !poll(); };
  while (true) {
    close_stages();
    if (heap_.empty() || stop()) break;
    const Event e = heap_.top();
    heap_.pop();
    if ((e.payload & kRunBits) != kRunBits) {
      dispatch(e.when, e.payload);
      ++n;
      continue;
    }
    // A run: its payloads in order. Events they schedule gather in open runs (later sequence numbers) and
    // reach the heap after it.
    const auto slot = static_cast<std::size_t>(e.payload & ~kRunBits);
    std::vector<std::uint64_t> run;
    run.swap(runs_[slot]);
    free_runs_.push_back(slot);
    for (std::size_t i = 0; i < run.size(); ++i) {
      if (i > 0 && stop()) {  // the rest goes back, as a run of its own
        close_stages();
        Stage rest;
        rest.when = e.when;
        rest.seq = e.seq + i;
        rest.payloads.assign(run.begin() + static_cast<std::ptrdiff_t>(i), run.end());
        close_stage(rest);
        return n;
      }
      dispatch(e.when, run[i]);
      ++n;
    }
  }
  return n;
}

void EventQueue::dispatch(Picoseconds when, std::uint64_t payload) {
  if (when == now_) {
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
  now_ = when;
  ++events_run_;
  if (payload & kActionBit) {
    const auto slot = static_cast<std::size_t>(payload & ~kActionBit);
    Action a = std::move(actions_[slot]);
    free_slots_.push_back(slot);
    a();
  } else {
    tag_handler_(payload);
  }
}

}  // namespace commsim::sim
