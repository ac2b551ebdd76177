// Collective model tests without a simulator: NCCL's tuner choices, channels per size, ring/tree flows.
#include <doctest/doctest.h>

#include <map>
#include <numeric>
#include <vector>

#include "commsim/core/error.hpp"
#include "commsim/models/transfer.hpp"

using namespace commsim;
using namespace commsim::models;

namespace {

CommInfo h200x4() {
  CommInfo c;
  c.nranks = 4;
  c.nnodes = 1;
  c.coll_channels = 24;
  c.nccl_intra_bandwidth = 360e9;
  return c;
}

CollectivePlan plan(CollOp op, std::uint64_t bytes, const CommInfo& c, const std::vector<int>& nodes,
                    const std::vector<std::string>& env = {}, int root = 0) {
  const auto m = make_transfer_model("nccl", ModelParams::defaults(), NcclEnv::parse(env));
  return m->collective(op, bytes, root, c, nodes, {});
}

}  // namespace

TEST_CASE(
    "collective: NCCL's tuner picks Ring LL for small and Ring Simple for large all-reduces on one node") {
  const std::vector<int> nodes{0, 0, 0, 0};
  const auto small = plan(CollOp::AllReduce, 1024, h200x4(), nodes);
  CHECK(small.algorithm == Algorithm::Ring);
  CHECK(small.protocol == Protocol::Ll);
  CHECK(small.channels == 1);  // a thread's worth of work per channel: fewer channels for small sizes
  const auto large = plan(CollOp::AllReduce, 1ULL << 30, h200x4(), nodes);
  CHECK(large.protocol == Protocol::Simple);
  CHECK(large.channels == 24);
  // NCCL's own estimate for the choice: 8.4 + 6 x 3.4 us + bytes / (360 x 4/6 GB/s).
  CHECK(large.nccl_estimate_us ==
        doctest::Approx(8.4 + 6 * 3.4 + (1ULL << 30) / (1000.0 * 240)).epsilon(1e-6));
}

TEST_CASE("collective: ring flows carry 2(n-1)/n of the buffer for all-reduce, (n-1)/n for all-gather") {
  const std::vector<int> nodes{0, 0, 0, 0};
  const double s = 1 << 30;
  const auto ar = plan(CollOp::AllReduce, 1 << 30, h200x4(), nodes, {"NCCL_PROTO=Simple"});
  REQUIRE(ar.flows.size() == 4);
  for (const auto& f : ar.flows) {
    CHECK(f.dst == (f.src + 1) % 4);
    CHECK(f.wire_bytes == doctest::Approx(1.5 * s));  // default efficiency 1, Simple: no protocol overhead
  }
  const auto ag = plan(CollOp::AllGather, 1 << 30, h200x4(), nodes, {"NCCL_PROTO=Simple"});
  for (const auto& f : ag.flows) CHECK(f.wire_bytes == doctest::Approx(0.75 * s));
  // LL sends a flag with every 8 data bytes: twice the wire bytes.
  const auto ll = plan(CollOp::AllGather, 1 << 20, h200x4(), nodes, {"NCCL_PROTO=LL"});
  CHECK(ll.protocol == Protocol::Ll);
  for (const auto& f : ll.flows) CHECK(f.wire_bytes == doctest::Approx(2 * 0.75 * (1 << 20)));
}

TEST_CASE("collective: broadcast is a chain from the root, reduce a chain into it") {
  const std::vector<int> nodes{0, 0, 0, 0};
  const auto b = plan(CollOp::Broadcast, 1 << 20, h200x4(), nodes, {}, 2);
  REQUIRE(b.flows.size() == 3);
  CHECK(b.flows[0].src == 2);
  CHECK(b.flows[2].dst == 1);
  const auto r = plan(CollOp::Reduce, 1 << 20, h200x4(), nodes, {}, 2);
  REQUIRE(r.flows.size() == 3);
  CHECK(r.flows[2].dst == 2);
}

TEST_CASE("collective: across many nodes small all-reduces go to Tree, and NCCL_ALGO is honoured") {
  CommInfo c;
  c.nranks = 64 * 8;
  c.nnodes = 64;
  c.coll_channels = 16;
  c.nccl_intra_bandwidth = 360e9;
  c.node_net_bandwidth = 8 * 50e9;
  std::vector<int> nodes;
  for (int n = 0; n < 64; ++n) nodes.insert(nodes.end(), 8, n);
  const auto t = plan(CollOp::AllReduce, 64 << 10, c, nodes);
  CHECK(t.algorithm == Algorithm::Tree);
  // Per tree: intra-node chains both ways (7 edges x 2 per node) and two binary trees over 64 nodes (63 x 2).
  CHECK(t.flows.size() == 8 * (64 * 7 * 2 + 2 * 63 * 2));  // 8 parallel trees, one per local GPU and NIC
  const auto ring = plan(CollOp::AllReduce, 64 << 10, c, nodes, {"NCCL_ALGO=Ring"});
  CHECK(ring.algorithm == Algorithm::Ring);
  CHECK(ring.flows.size() == 8 * 512);
  CHECK_THROWS_WITH_AS(plan(CollOp::Broadcast, 1024, c, nodes, {"NCCL_ALGO=Tree"}),
                       doctest::Contains("Tree runs only all_reduce"), UsageError);
  CHECK_THROWS_WITH_AS(NcclEnv::parse({"NCCL_ALGO=Magic"}), doctest::Contains("valid: Ring, Tree"),
                       UsageError);
  CHECK_THROWS_WITH_AS(NcclEnv::parse({"NCCL_ALGO=^Ring,Tree"}), doctest::Contains("neither Ring nor Tree"),
                       UsageError);
}

TEST_CASE("collective: across machines rings enter and leave only through GPUs with a NIC of their own") {
  // 2 machines x 4 GPUs; only GPUs 0 and 1 of each machine have a NIC (a what-if with 2 of 4 NICs kept).
  CommInfo c = h200x4();
  c.nranks = 8;
  c.nnodes = 2;
  const std::vector<int> nodes{0, 0, 0, 0, 1, 1, 1, 1};
  const std::vector<int> nics{0, 1, -1, -1, 0, 1, -1, -1};
  const auto m = make_transfer_model("nccl", ModelParams::defaults(), NcclEnv::parse({"NCCL_ALGO=Ring"}));
  const CollectivePlan p = m->collective(CollOp::AllReduce, 1ULL << 30, 0, c, nodes, nics);
  std::map<int, int> leaving, entering;
  std::size_t flows_per_ring = 8;
  REQUIRE(p.flows.size() == 4 * flows_per_ring);  // one ring per GPU of the smaller machine, 8 edges each
  for (const CollFlow& f : p.flows) {
    if (nodes[static_cast<std::size_t>(f.src)] == nodes[static_cast<std::size_t>(f.dst)]) continue;
    CHECK(nics[static_cast<std::size_t>(f.src)] >= 0);
    CHECK(nics[static_cast<std::size_t>(f.dst)] >= 0);
    ++leaving[f.src];
    ++entering[f.dst];
  }
  // Each NIC GPU carries the same share: 4 rings x 2 machine crossings = 8 crossings over 4 NIC GPUs.
  for (int r : {0, 1, 4, 5}) {
    CHECK(leaving[r] == 2);
    CHECK(entering[r] == 2);
  }
  // Each ring still visits every rank once per machine: every rank sends 4 times (once per ring).
  std::map<int, int> sends;
  for (const CollFlow& f : p.flows) ++sends[f.src];
  for (int r = 0; r < 8; ++r) CHECK(sends[r] == 4);
  // With every GPU owning a NIC (or the list empty) the rings are the plain rotations, as before.
  const CollectivePlan all = m->collective(CollOp::AllReduce, 1ULL << 30, 0, c, nodes, {});
  const CollectivePlan own =
      m->collective(CollOp::AllReduce, 1ULL << 30, 0, c, nodes, std::vector<int>{0, 1, 2, 3, 0, 1, 2, 3});
  REQUIRE(all.flows.size() == own.flows.size());
  for (std::size_t i = 0; i < all.flows.size(); ++i) {
    CHECK(all.flows[i].src == own.flows[i].src);
    CHECK(all.flows[i].dst == own.flows[i].dst);
  }
}
