// The incremental, coalescing flow solver against the whole-network solver it replaced, on random networks.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "commsim/sim/event_queue.hpp"
#include "commsim/sim/flow_network.hpp"
#include "reference_flow_network.hpp"

using namespace commsim;
using namespace commsim::sim;

namespace {

struct FlowSpec {
  int path = 0;  ///< index into Case::paths
  double bytes = 0;
  double cap = 0;
  Picoseconds start = 0;
  int after = -1;  ///< starts when this flow completes (instead of at `start`)
};

struct Case {
  std::vector<double> capacity;
  std::vector<double> saturation;
  std::vector<std::vector<int>> paths;
  std::vector<FlowSpec> flows;
};

/// Random resources, paths and flows; about a third of the flows are copies of another (same path object,
/// cap, bytes and start), which the incremental solver coalesces.
Case random_case(std::mt19937_64& rng) {
  Case c;
  std::uniform_int_distribution<int> n_res(2, 9), n_flows(1, 40), path_len(1, 4), pick(0, 999);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const int resources = n_res(rng);
  for (int r = 0; r < resources; ++r) {
    c.capacity.push_back(1e9 * (1 + std::floor(unit(rng) * 100)));
    c.saturation.push_back(pick(rng) < 150 ? 2 + 8 * unit(rng) : 0);
  }
  const int paths = 1 + resources;
  for (int p = 0; p < paths; ++p) {
    std::vector<int> all(resources);
    for (int r = 0; r < resources; ++r) all[r] = r;
    std::shuffle(all.begin(), all.end(), rng);
    all.resize(std::min(resources, path_len(rng)));
    c.paths.push_back(all);
  }
  const int flows = n_flows(rng);
  for (int f = 0; f < flows; ++f) {
    if (f > 0 && pick(rng) < 330) {
      c.flows.push_back(c.flows[std::uniform_int_distribution<int>(0, f - 1)(rng)]);
      continue;
    }
    FlowSpec s;
    s.path = std::uniform_int_distribution<int>(0, paths - 1)(rng);
    // Round byte counts and caps, so that equal shares and ties between components happen often.
    s.bytes = pick(rng) < 50 ? 0.0 : 1e6 * (1 + std::floor(unit(rng) * 64));
    s.cap = pick(rng) < 400 ? 1e9 * (1 + std::floor(unit(rng) * 50)) : 0.0;
    const int when = pick(rng);
    if (when < 450) {
      s.start = 0;
    } else if (when < 800 || f == 0) {
      s.start = static_cast<Picoseconds>(std::floor(unit(rng) * 8)) * 1'000'000'000;  // ms steps: ties
    } else {
      s.after = std::uniform_int_distribution<int>(0, f - 1)(rng);
    }
    c.flows.push_back(s);
  }
  return c;
}

/// Completion time of every flow, and the order in which the callbacks ran.
struct Outcome {
  std::vector<Picoseconds> done;
  std::vector<int> order;
  std::uint64_t events = 0;
};

template <class Net>
Outcome run_case(const Case& c) {
  EventQueue q;
  Net net(q);
  for (std::size_t r = 0; r < c.capacity.size(); ++r)
    net.add_resource(c.capacity[r], "r" + std::to_string(r), c.saturation[r]);
  Outcome out;
  out.done.assign(c.flows.size(), -1);
  std::vector<std::vector<int>> followers(c.flows.size());
  for (std::size_t f = 0; f < c.flows.size(); ++f) {
    if (c.flows[f].after >= 0) followers[c.flows[f].after].push_back(static_cast<int>(f));
  }
  std::function<void(int)> launch = [&](int f) {
    const FlowSpec& s = c.flows[f];
    net.start_on(c.paths[s.path], s.bytes, s.cap, [&, f] {
      out.done[f] = q.now();
      out.order.push_back(f);
      for (int g : followers[f]) launch(g);
    });
  };
  for (std::size_t f = 0; f < c.flows.size(); ++f) {
    if (c.flows[f].after < 0) q.at(c.flows[f].start, [&, f] { launch(static_cast<int>(f)); });
  }
  out.events = q.run();
  return out;
}

}  // namespace

TEST_CASE("flow_network: incremental solver matches the whole-network solver on random networks") {
  std::mt19937_64 rng(17);
  int cases = 0, exact = 0, same_order = 0;
  Picoseconds worst = 0;
  double worst_rel = 0;
  for (int i = 0; i < 3000; ++i) {
    const Case c = random_case(rng);
    const Outcome want = run_case<reference::ReferenceFlowNetwork>(c);
    const Outcome got = run_case<FlowNetwork>(c);
    ++cases;
    bool all_equal = true;
    for (std::size_t f = 0; f < c.flows.size(); ++f) {
      REQUIRE(want.done[f] >= 0);
      REQUIRE(got.done[f] >= 0);
      const Picoseconds diff = std::llabs(got.done[f] - want.done[f]);
      all_equal = all_equal && diff == 0;
      worst = std::max(worst, diff);
      if (want.done[f] > 0)
        worst_rel = std::max(worst_rel, static_cast<double>(diff) / static_cast<double>(want.done[f]));
      // The documented bound (sim/README.md, Speed): a few picoseconds, or 1e-9 of the completion time.
      CHECK(diff <=
            std::max<Picoseconds>(4, static_cast<Picoseconds>(1e-9 * static_cast<double>(want.done[f]))));
    }
    exact += all_equal ? 1 : 0;
    same_order += got.order == want.order ? 1 : 0;
  }
  MESSAGE(cases << " cases, " << exact << " bit-identical, " << same_order
                << " with the same callback order; "
                << "worst difference " << worst << " ps (" << worst_rel << " relative)");
  // Most cases must be identical to the picosecond; differences come only from float rounding.
  CHECK(exact >= cases * 85 / 100);
}

TEST_CASE(
    "flow_network: a component of over 65,536 flows re-solved at once matches the whole-network solver") {
  // Above 65,536 classes solve() applies the new rates, drops the voided completions and only then adds the
  // new ones. 70,000 flows that cannot coalesce (each its own path object) share four links; a second wave
  // at 1 ms and the waves' ends re-solve the whole component with a scheduled completion for every flow.
  Case c;
  c.capacity = {400e9, 300e9, 200e9, 100e9};
  c.saturation = {0, 0, 6, 0};
  const std::vector<std::vector<int>> shapes{{0, 1}, {0, 2}, {1, 3}, {0, 1, 2, 3}};
  for (int f = 0; f < 70'000; ++f) {
    c.paths.push_back(shapes[static_cast<std::size_t>(f % 4)]);
    FlowSpec s;
    s.path = f;
    s.bytes = 1e6 * (1 + f % 3);
    s.cap = f % 7 == 0 ? 2e9 : 0.0;
    s.start = f % 5 == 0 ? 1'000'000'000 : 0;
    c.flows.push_back(s);
  }
  const Outcome want = run_case<reference::ReferenceFlowNetwork>(c);
  const Outcome got = run_case<FlowNetwork>(c);
  for (std::size_t f = 0; f < c.flows.size(); ++f) {
    REQUIRE(got.done[f] >= 0);
    const Picoseconds diff = std::llabs(got.done[f] - want.done[f]);
    CHECK(diff <=
          std::max<Picoseconds>(4, static_cast<Picoseconds>(1e-9 * static_cast<double>(want.done[f]))));
  }
  CHECK(got.order == want.order);
}

TEST_CASE("flow_network: identical flows started together become one weighted flow") {
  EventQueue q;
  FlowNetwork net(q);
  const auto a = net.add_resource(10e9, "a");
  const auto b = net.add_resource(40e9, "b");
  const std::vector<int> path{a, b}, other{b};
  std::vector<Picoseconds> done(6, -1);
  for (int i = 0; i < 4; ++i) net.start_on(path, 1e9, 0, [&, i] { done[i] = q.now(); });
  net.start_on(other, 1e9, 0, [&] { done[4] = q.now(); });
  net.start_on(path, 2e9, 0, [&] { done[5] = q.now(); });  // other bytes: its own flow
  q.run();
  CHECK(net.coalesced_flows() == 3);
  // a: 5 flows at 2 GB/s; b: those 5 plus one getting 30 GB/s.
  for (int i = 0; i < 4; ++i) CHECK(done[i] == done[0]);
  CHECK(static_cast<double>(done[0]) / 1e12 == doctest::Approx(0.5));
  CHECK(static_cast<double>(done[4]) / 1e12 == doctest::Approx(1.0 / 30));
  CHECK(static_cast<double>(done[5]) / 1e12 == doctest::Approx(0.5 + 1.0 / 10));
}

TEST_CASE("flow_network: a start or end re-solves only the flows that share resources with it") {
  EventQueue q;
  FlowNetwork net(q);
  std::vector<std::vector<int>> links;
  for (int i = 0; i < 50; ++i) links.push_back({net.add_resource(10e9, "l" + std::to_string(i))});
  Picoseconds last = 0;
  // 50 independent links, each with flows of different sizes: every completion touches one link only.
  for (int i = 0; i < 50; ++i) {
    for (int k = 1; k <= 4; ++k) net.start_on(links[i], 1e6 * (k + i * 4), 0, [&] { last = q.now(); });
  }
  q.run();
  CHECK(last > 0);
  // The first solve sees all 200 flows; each of the 200 completions re-solves at most the 3 flows left on
  // its link (the whole-network solver re-solved every active flow: ~20,000).
  CHECK(net.solved_flows() <= 200 + 200 * 3);
  CHECK(net.active_flows() == 0);
}
