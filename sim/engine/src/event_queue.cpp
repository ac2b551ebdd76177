// Deterministic event queue implementation.
#include "commsim/sim/event_queue.hpp"

#include "commsim/core/error.hpp"

namespace commsim::sim {

void EventQueue::at(Picoseconds when, Action action) {
  if (when < now_) throw Error("event scheduled in the past");
  std::size_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
    actions_[slot] = std::move(action);
  } else {
    slot = actions_.size();
    actions_.push_back(std::move(action));
  }
  heap_.push({when, seq_++, slot});
}

std::uint64_t EventQueue::run() {
  return run(nullptr, 0);
}

std::uint64_t EventQueue::run(const std::function<bool()>& poll, std::uint64_t every) {
  std::uint64_t n = 0;
  while (!heap_.empty()) {
    if (poll && every > 0 && n % every == 0 && !poll()) break;
    const Event e = heap_.top();
    heap_.pop();
    now_ = e.when;
    Action a = std::move(actions_[e.slot]);
    free_slots_.push_back(e.slot);
    ++events_run_;
    a();
    ++n;
  }
  return n;
}

}  // namespace commsim::sim
