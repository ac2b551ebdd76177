// Unit tests for the event queue's bounds (the largest simulated time, the work limits) and tagged events.
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
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
