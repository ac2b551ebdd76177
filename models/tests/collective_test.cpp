// Collective model tests without a simulator: NCCL's tuner choices, channels per size, ring/tree flows.
#include <doctest/doctest.h>

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
  return m->collective(op, bytes, root, c, nodes);
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
