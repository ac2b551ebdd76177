// Engine tests with closed-form answers: event order, one flow, sharing, full duplex, caps, saturation, tags.
#include <doctest/doctest.h>

#include <cmath>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "commsim/sim/event_queue.hpp"
#include "commsim/sim/flow_network.hpp"

using namespace commsim;
using namespace commsim::sim;

namespace {
constexpr double kGB = 1e9;
double seconds(Picoseconds t) {
  return static_cast<double>(t) / 1e12;
}
}  // namespace

TEST_CASE("event_queue: equal times run in insertion order, later times after") {
  EventQueue q;
  std::vector<int> order;
  q.at(5, [&] { order.push_back(3); });
  q.at(1, [&] { order.push_back(1); });
  q.at(5, [&] { order.push_back(4); });
  q.at(1, [&] {
    order.push_back(2);
    q.after(4, [&] { order.push_back(5); });
  });
  q.run();
  CHECK(order == std::vector<int>{1, 2, 3, 4, 5});
  CHECK(q.now() == 5);
}

TEST_CASE("flow_network: one flow takes bytes / capacity") {
  EventQueue q;
  FlowNetwork net(q);
  const auto link = net.add_resource(10 * kGB, "link");
  Picoseconds done = -1;
  net.start({link}, 1 * kGB, 0, [&] { done = q.now(); });
  q.run();
  CHECK(seconds(done) == doctest::Approx(0.1));
}

TEST_CASE("flow_network: two flows on one link share it equally until one ends") {
  EventQueue q;
  FlowNetwork net(q);
  const auto link = net.add_resource(10 * kGB, "link");
  Picoseconds a = -1, b = -1;
  net.start({link}, 1 * kGB, 0, [&] { a = q.now(); });
  net.start({link}, 3 * kGB, 0, [&] { b = q.now(); });
  q.run();
  CHECK(seconds(a) == doctest::Approx(0.2));  // 1 GB at 5 GB/s
  CHECK(seconds(b) == doctest::Approx(0.4));  // 1 GB at 5 GB/s, then 2 GB at 10 GB/s
}

TEST_CASE("flow_network: the two directions of a full-duplex link are independent") {
  EventQueue q;
  FlowNetwork net(q);
  const auto ab = net.add_resource(10 * kGB, "a->b");
  const auto ba = net.add_resource(10 * kGB, "b->a");
  Picoseconds x = -1, y = -1;
  net.start({ab}, 1 * kGB, 0, [&] { x = q.now(); });
  net.start({ba}, 1 * kGB, 0, [&] { y = q.now(); });
  q.run();
  CHECK(seconds(x) == doctest::Approx(0.1));
  CHECK(seconds(y) == doctest::Approx(0.1));
}

TEST_CASE("flow_network: a capped flow leaves the rest of the link to others (max-min)") {
  EventQueue q;
  FlowNetwork net(q);
  const auto link = net.add_resource(10 * kGB, "link");
  const auto capped = net.start({link}, 100 * kGB, 2 * kGB, [] {});
  const auto free_flow = net.start({link}, 100 * kGB, 0, [] {});
  CHECK(net.rate(capped) == doctest::Approx(2 * kGB));
  CHECK(net.rate(free_flow) == doctest::Approx(8 * kGB));
}

TEST_CASE("flow_network: max-min fairness across links (a flow limited elsewhere frees capacity)") {
  // Flow 1 crosses links A (10) and B (4); flow 2 crosses A only. B limits flow 1 to 4, flow 2 gets 6.
  EventQueue q;
  FlowNetwork net(q);
  const auto a = net.add_resource(10 * kGB, "A");
  const auto b = net.add_resource(4 * kGB, "B");
  const auto f1 = net.start({a, b}, 100 * kGB, 0, [] {});
  const auto f2 = net.start({a}, 100 * kGB, 0, [] {});
  CHECK(net.rate(f1) == doctest::Approx(4 * kGB));
  CHECK(net.rate(f2) == doctest::Approx(6 * kGB));
}

TEST_CASE("flow_network: a GPU's NVSwitch port is shared by all its peers") {
  // GPU0 sends to GPU1, GPU2 and GPU3 through its one uplink (450 GB/s): each gets a third.
  EventQueue q;
  FlowNetwork net(q);
  const auto up = net.add_resource(450 * kGB, "GPU0->nvswitch");
  std::vector<FlowNetwork::ResourceId> down;
  for (int i = 1; i <= 3; ++i) down.push_back(net.add_resource(450 * kGB, "nvswitch->GPU"));
  std::vector<FlowNetwork::FlowId> flows;
  for (int i = 0; i < 3; ++i) flows.push_back(net.start({up, down[i]}, 1 * kGB, 0, [] {}));
  for (auto f : flows) CHECK(net.rate(f) == doctest::Approx(150 * kGB));
}

TEST_CASE("flow_network: smooth saturation gives D/(1+(D/C)^k)^(1/k)") {
  EventQueue q;
  FlowNetwork net(q);
  const auto link = net.add_resource(10 * kGB, "link", 6.0);
  const auto f = net.start({link}, 100 * kGB, 10 * kGB, [] {});
  CHECK(net.rate(f) == doctest::Approx(10 * kGB / std::pow(2.0, 1.0 / 6.0)));
  // Far below capacity the cap binds, almost exactly.
  EventQueue q2;
  FlowNetwork net2(q2);
  const auto l2 = net2.add_resource(10 * kGB, "link", 6.0);
  const auto g = net2.start({l2}, 1 * kGB, 1 * kGB, [] {});
  CHECK(net2.rate(g) == doctest::Approx(1 * kGB).epsilon(1e-5));
}

TEST_CASE("flow_network: zero-byte flows complete at once, runs are bit-for-bit reproducible") {
  auto run = [] {
    EventQueue q;
    FlowNetwork net(q);
    const auto link = net.add_resource(7 * kGB, "link");
    std::vector<Picoseconds> ends;
    for (int i = 0; i < 20; ++i) {
      q.at(i * 1000, [&, i] { net.start({link}, 1e6 * (i % 7), 0, [&] { ends.push_back(q.now()); }); });
    }
    q.run();
    return ends;
  };
  const auto a = run();
  CHECK(a.size() == 20);
  CHECK(a == run());
}

TEST_CASE("flow_network: tagged flows complete through the tag handler, in start order with callback flows") {
  EventQueue q;
  FlowNetwork net(q);
  const auto link = net.add_resource(10 * kGB, "link");
  const std::vector<FlowNetwork::ResourceId> links{link};
  const std::span<const FlowNetwork::ResourceId> path(links);
  std::vector<std::pair<std::uint64_t, Picoseconds>> done;  // (tag or 100 + callback index, when)
  net.set_tag_handler([&](FlowNetwork::Tag tag) { done.emplace_back(tag, q.now()); });
  // Four flows of 1 GB on one 10 GB/s link, two tagged and two with callbacks, alternating, all on the same
  // path (a span: the key is its address) with equal bytes and cap: they coalesce into one weighted flow.
  // With a fifth, 2 GB tagged flow each moves at 2 GB/s: the four end together at 0.5 s, the fifth has 1 GB
  // left, alone: 0.6 s.
  net.start_tagged(path, 1 * kGB, 0, 7);
  net.start_on(path, 1 * kGB, 0, [&] { done.emplace_back(100, q.now()); });
  net.start_tagged(path, 1 * kGB, 0, (FlowNetwork::Tag{1} << 62) | 3);
  net.start_on(path, 1 * kGB, 0, [&] { done.emplace_back(101, q.now()); });
  net.start_tagged(path, 2 * kGB, 0, 9);
  CHECK(net.coalesced_flows() == 2);
  q.run();
  REQUIRE(done.size() == 5);
  const std::vector<std::uint64_t> order{7, 100, (std::uint64_t{1} << 62) | 3, 101, 9};
  for (std::size_t i = 0; i < done.size(); ++i) {
    CHECK(done[i].first == order[i]);
    CHECK(seconds(done[i].second) == doctest::Approx(i < 4 ? 0.5 : 0.6));
  }
  CHECK(done[0].second == done[3].second);
  // A tag must leave the top bit free (it marks flows with callbacks).
  CHECK_THROWS(net.start_tagged(path, 1, 0, FlowNetwork::Tag{1} << 63));
}

TEST_CASE("flow_network: a tagged flow needs a tag handler") {
  EventQueue q;
  FlowNetwork net(q);
  const auto link = net.add_resource(10 * kGB, "link");
  const std::vector<FlowNetwork::ResourceId> path{link};
  CHECK_THROWS(net.start_tagged(path, 1, 0, 1));
}

TEST_CASE("flow_network: a network on handed-on memory never joins the last network's flows") {
  // The recent-class slots travel with the memory. A flow identical to one the last network had in flight
  // (the same path object, cap and bytes, at the same instant) must start a class of its own, not join the
  // last network's (its slot is stale: the classes were emptied).
  static const std::vector<FlowNetwork::ResourceId> path{0, 1};
  FlowNetwork::Storage handed;
  {
    // Three identical flows in flight (one class), cut off before any event.
    EventQueue q;
    FlowNetwork first(q);
    first.add_resource(10 * kGB, "");
    first.add_resource(20 * kGB, "");
    for (int i = 0; i < 3; ++i) first.start_on(path, 1 * kGB, 0, [] {});
    REQUIRE(first.coalesced_flows() == 1);
    handed = first.release_storage();
  }
  // A network on its memory, at the same instant: these two are alone on the link (2 GB at 10 GB/s).
  EventQueue q;
  FlowNetwork net(q);
  net.add_resource(10 * kGB, "");
  net.add_resource(20 * kGB, "");
  net.adopt_storage(std::move(handed));
  Picoseconds a = -1, b = -1;
  net.start_on(path, 1 * kGB, 0, [&] { a = q.now(); });
  net.start_on(path, 1 * kGB, 0, [&] { b = q.now(); });  // joins this network's own class
  q.run();
  CHECK(net.coalesced_flows() == 1);
  CHECK(seconds(a) == doctest::Approx(0.2));
  CHECK(seconds(b) == doctest::Approx(0.2));
}

TEST_CASE("flow_network: memory handed on from a network cut off with flows in flight changes nothing") {
  // release_storage / adopt_storage pass arrays from one run to the next (Runtime does, run after run): a
  // network built on them must give a new network's every completion time, in the same order.
  struct Run {
    EventQueue q;
    FlowNetwork net{q};
    std::vector<std::pair<int, Picoseconds>> ends;
    std::vector<std::vector<FlowNetwork::ResourceId>> paths;
    explicit Run(FlowNetwork::Storage* adopt = nullptr) {
      for (int r = 0; r < 5; ++r) net.add_resource((10 + 5 * r) * kGB, "", r == 4 ? 2.0 : 0.0);
      if (adopt) net.adopt_storage(std::move(*adopt));
      paths = {{0, 1}, {1, 2}, {0, 2, 3}, {3}, {4, 0}, {4}, {2, 4}};
      for (int i = 0; i < 40; ++i) {
        const auto when = static_cast<Picoseconds>((i * 7919) % 97) * 1'000'000;  // 0-96 us, unordered
        q.at(when, [this, i] {
          const auto& path = paths[static_cast<std::size_t>(i) % paths.size()];
          const double bytes = (1 + (i * 31) % 17) * 1e5;
          const double cap = i % 5 == 0 ? 3 * kGB : 0.0;
          net.start_on(path, bytes, cap, [this, i] { ends.emplace_back(i, q.now()); });
        });
      }
    }
  };
  Run first;
  int polls = 0;
  first.q.run([&] { return ++polls < 3; }, 8);  // stops after 16 events
  REQUIRE(first.net.active_flows() > 0);
  REQUIRE(first.ends.size() < 40);
  FlowNetwork::Storage handed = first.net.release_storage();
  Run reused(&handed);
  reused.q.run();
  Run fresh;
  fresh.q.run();
  REQUIRE(fresh.ends.size() == 40);
  CHECK(reused.ends == fresh.ends);
  CHECK(reused.net.recomputations() == fresh.net.recomputations());
  CHECK(reused.net.solved_flows() == fresh.net.solved_flows());
  CHECK(reused.net.coalesced_flows() == fresh.net.coalesced_flows());
}

TEST_CASE("flow_network: a prefetch hint changes nothing, even for a path no flow could start on") {
  // 200 flows over 40 shared links and 2,060 others (more resources than kFetchAhead, so every loop fetches
  // ahead: starts, completions, the component search, the water-filling); one run hints every start (and
  // paths with unknown resources or none), the other none.
  const auto run = [](bool hint) {
    EventQueue q;
    FlowNetwork net(q);
    for (int r = 0; r < 2100; ++r) net.add_resource((10 + r % 7) * kGB, "", r % 9 == 0 ? 3.0 : 0.0);
    std::vector<std::vector<FlowNetwork::ResourceId>> paths;
    for (int i = 0; i < 200; ++i) paths.push_back({i % 40, (i * 7 + 3) % 40, 40 + (i * 13 + 5) % 2060});
    const std::vector<FlowNetwork::ResourceId> unknown = {-1, 2100, 1'000'000};
    std::vector<std::pair<int, Picoseconds>> ends;
    for (int i = 0; i < 200; ++i) {
      q.at(static_cast<Picoseconds>(i / 50) * 5'000'000, [&, i] {
        const double bytes = i % 3 == 0 ? 2e6 : 1e5 * (1 + i % 11);
        const double cap = i % 4 == 0 ? 2 * kGB : 0.0;
        if (hint) {
          net.prefetch(paths[static_cast<std::size_t>(i)], bytes, cap);
          net.prefetch(unknown, bytes, cap);
          net.prefetch({}, -1, 0);
        }
        net.start_on(paths[static_cast<std::size_t>(i)], bytes, cap,
                     [&, i] { ends.emplace_back(i, q.now()); });
      });
    }
    q.run();
    return std::tuple{ends, net.recomputations(), net.solved_flows(), net.coalesced_flows()};
  };
  const auto plain = run(false);
  REQUIRE(std::get<0>(plain).size() == 200);
  CHECK(run(true) == plain);
}
