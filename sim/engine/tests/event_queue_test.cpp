// Unit tests for the event queue's bounds (the largest simulated time, the work limits) and tagged events.
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "commsim/core/error.hpp"
#include "commsim/core/limits.hpp"
#include "commsim/sim/event_queue.hpp"

using commsim::kMaxSimulatedTime;
using commsim::Picoseconds;
using commsim::ValueError;
using commsim::sim::EventQueue;

TEST_CASE("event_queue: events past the largest simulated time are refused") {
  EventQueue q;
  CHECK_THROWS_WITH_AS(q.at(kMaxSimulatedTime + 1, [] {}), doctest::Contains("largest simulated time"),
                       ValueError);
  q.at(kMaxSimulatedTime - 10, [&] { CHECK_THROWS_AS(q.after(11, [] {}), ValueError); });
  q.run();
  CHECK(q.now() == kMaxSimulatedTime - 10);
}

TEST_CASE("event_queue: a negative delay is refused, not scheduled in the past") {
  EventQueue q;
  CHECK_THROWS_AS(q.after(-1, [] {}), ValueError);
}

TEST_CASE("event_queue: events that never advance time stop as a would-be hang") {
  EventQueue q;
  q.set_limits(1000000, 1000);
  std::function<void()> again = [&] { q.after(0, again); };
  q.at(0, again);
  CHECK_THROWS_WITH_AS(q.run(), doctest::Contains("would-be hang"), ValueError);
}

TEST_CASE("event_queue: the total event bound stops an endless run") {
  EventQueue q;
  q.set_limits(5000, 1000000);
  std::function<void()> again = [&] { q.after(1, again); };
  q.at(0, again);
  CHECK_THROWS_WITH_AS(q.run(), doctest::Contains("5000 events"), ValueError);
}

TEST_CASE("event_queue: ordinary runs are not affected by the bounds") {
  EventQueue q;
  int ran = 0;
  for (Picoseconds t = 0; t < 100; ++t) q.at(t, [&] { ++ran; });
  for (int i = 0; i < 100; ++i) q.at(50, [&] { ++ran; });
  CHECK(q.run() == 200);
  CHECK(ran == 200);
}

TEST_CASE("event_queue: tagged events and actions at equal times run in insertion order") {
  EventQueue q;
  std::vector<std::uint64_t> order;
  q.set_tag_handler([&](EventQueue::Tag tag) { order.push_back(tag); });
  q.at(5, [&] { order.push_back(100); });
  q.at_tagged(5, 1);
  q.at_tagged(1, 2);
  q.at(5, [&] { order.push_back(101); });
  q.after_tagged(5, (EventQueue::Tag{1} << 62) | 3);
  q.at(1, [&] {
    order.push_back(102);
    q.after_tagged(0, 4);
  });
  CHECK(q.run() == 7);
  CHECK(order == std::vector<std::uint64_t>{2, 102, 4, 100, 1, 101, (std::uint64_t{1} << 62) | 3});
  CHECK_THROWS(q.at_tagged(6, std::uint64_t{1} << 63));  // the top bit marks stored actions
  CHECK_THROWS(q.at_tagged(4, 1));                       // in the past
  EventQueue untagged;
  CHECK_THROWS(untagged.at_tagged(0, 1));  // no handler
}

TEST_CASE(
    "event_queue: a run of events at one time keeps insertion order, also when a poll stops it midway") {
  // Runs form from consecutive events at one time; events the run schedules for the same time follow it, and
  // earlier or later times sort around it. The reference order is the (time, insertion) order.
  auto fill = [](EventQueue& q, std::vector<std::uint64_t>& order) {
    q.set_tag_handler([&q, &order](EventQueue::Tag tag) {
      order.push_back(tag);
      if (tag == 12) q.after_tagged(0, 90);  // same time, after everything queued for it
      if (tag == 13) q.after_tagged(3, 91);  // later, between runs
    });
    for (std::uint64_t t = 10; t < 16; ++t) q.at_tagged(7, t);  // a run at 7
    q.at_tagged(2, 1);
    q.at_tagged(7, 20);  // 7 again after another time: its own entry, after the run
    q.at_tagged(10, 30);
    q.at_tagged(10, 31);
  };
  const std::vector<std::uint64_t> expected{1, 10, 11, 12, 13, 14, 15, 20, 90, 30, 31, 91};
  EventQueue whole;
  std::vector<std::uint64_t> a;
  fill(whole, a);
  CHECK(whole.run() == expected.size());
  CHECK(a == expected);
  // Stopped every third event (the poll is asked before each), then resumed: the same order.
  EventQueue parts;
  std::vector<std::uint64_t> b;
  fill(parts, b);
  int asked = 0;
  std::uint64_t total = 0;
  for (int round = 0; round < 20 && !parts.empty(); ++round) {
    total += parts.run([&] { return ++asked % 3 != 0; }, 1);
  }
  CHECK(parts.empty());
  CHECK(total == expected.size());
  CHECK(b == expected);
  CHECK(parts.now() == 10);
}

TEST_CASE(
    "event_queue: events at several interleaved times run as a plain (time, insertion) queue runs them") {
  // Pushes alternate between up to six times (more runs than stay open at once), and each event schedules
  // more; a reference queue ordered by (time, insertion number) must see the same sequence.
  struct Reference {
    std::map<std::pair<Picoseconds, std::uint64_t>, std::uint64_t> pending;
    std::uint64_t seq = 0;
    Picoseconds now = 0;
    void at(Picoseconds t, std::uint64_t tag) { pending[{t, seq++}] = tag; }
  };
  const auto follow_ups = [](std::uint64_t tag) {
    std::vector<std::pair<Picoseconds, std::uint64_t>> out;  // (delay, tag)
    if (tag < 400) {
      for (std::uint64_t k = 0; k < tag % 3; ++k)
        out.emplace_back(static_cast<Picoseconds>((tag + k) % 4), tag * 3 + k + 7);
    }
    return out;
  };
  EventQueue q;
  Reference ref;
  std::vector<std::uint64_t> got, want;
  q.set_tag_handler([&](EventQueue::Tag tag) {
    got.push_back(tag);
    for (const auto& [d, t] : follow_ups(tag)) q.after_tagged(d, t);
  });
  for (std::uint64_t i = 0; i < 60; ++i) {
    const Picoseconds t = static_cast<Picoseconds>((i * 7) % 6);
    q.at_tagged(t, i);
    ref.at(t, i);
  }
  while (!ref.pending.empty()) {
    const auto it = ref.pending.begin();
    ref.now = it->first.first;
    const std::uint64_t tag = it->second;
    ref.pending.erase(it);
    want.push_back(tag);
    for (const auto& [d, t] : follow_ups(tag)) ref.at(ref.now + d, t);
  }
  CHECK(q.run() == want.size());
  CHECK(got == want);
}
