// Unit tests for the event queue's bounds: the largest simulated time and the work limits.
#include <doctest/doctest.h>

#include <functional>

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
