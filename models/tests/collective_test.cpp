// Collective model tests without a simulator: NCCL's tuner choices, channels per size, ring/tree flows.
#include <doctest/doctest.h>

#include <cmath>
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

TEST_CASE("collective: the ring's receive-only step costs 2 ranks a larger share of link time than 4") {
  // With ring_recv_step f, a ring of n ranks keeps its links busy k / (k + f) of the time, k = n - 1 sending
  // steps per loop (2 (n - 1) for all-reduce): wire bytes grow by (k + f) / k. Broadcast and reduce are
  // chains.
  ModelParams p = ModelParams::defaults();
  p.coll_ring_recv_step = 0.5;
  const auto m = make_transfer_model("nccl", p, NcclEnv::parse({"NCCL_PROTO=Simple"}));
  const double s = 1 << 30;
  CommInfo two = h200x4();
  two.nranks = 2;
  const auto ag2 = m->collective(CollOp::AllGather, 1 << 30, 0, two, std::vector<int>{0, 0}, {});
  for (const auto& f : ag2.flows) CHECK(f.wire_bytes == doctest::Approx(0.5 * s * 1.5 / 1));
  const auto ag4 = m->collective(CollOp::AllGather, 1 << 30, 0, h200x4(), std::vector<int>{0, 0, 0, 0}, {});
  for (const auto& f : ag4.flows) CHECK(f.wire_bytes == doctest::Approx(0.75 * s * 3.5 / 3));
  const auto rs4 =
      m->collective(CollOp::ReduceScatter, 1 << 30, 0, h200x4(), std::vector<int>{0, 0, 0, 0}, {});
  for (const auto& f : rs4.flows) CHECK(f.wire_bytes == doctest::Approx(0.75 * s * 3.5 / 3));
  const auto ar4 = m->collective(CollOp::AllReduce, 1 << 30, 0, h200x4(), std::vector<int>{0, 0, 0, 0}, {});
  for (const auto& f : ar4.flows) CHECK(f.wire_bytes == doctest::Approx(1.5 * s * 6.5 / 6));
  const auto b4 = m->collective(CollOp::Broadcast, 1 << 30, 0, h200x4(), std::vector<int>{0, 0, 0, 0}, {});
  for (const auto& f : b4.flows) CHECK(f.wire_bytes == doctest::Approx(s));
  // Tree all-reduce has no ring loop: only its own efficiency (the datasheet's 0.92, NCCL's tuner factor).
  CHECK(p.coll_tree_efficiency == 0.92);
  const auto tree =
      make_transfer_model("nccl", p, NcclEnv::parse({"NCCL_ALGO=Tree", "NCCL_PROTO=Simple"}))
          ->collective(CollOp::AllReduce, 1 << 30, 0, h200x4(), std::vector<int>{0, 0, 0, 0}, {});
  for (const auto& f : tree.flows) CHECK(f.wire_bytes == doctest::Approx(s / 0.92));
}

TEST_CASE(
    "collective: where the channels bind, reducing and receive-only steps set each ring's channel rate") {
  // A Simple ring loop costs its steps' thread time in forwarding steps: all_gather n - 1 + recv, all_reduce
  // (n - 1)(1 + reduce) + recv, reduce_scatter 1 + (n - 2) reduce + recv; a channel's data rate is its
  // sending steps (n - 1; 2 (n - 1) for all_reduce) over that sum, whatever the link-level efficiency. In
  // wire bytes (what flow_rate caps) it is that rate x wire bytes / data bytes.
  ModelParams p = ModelParams::defaults();
  p.coll.channel_bandwidth[2] = 20e9;
  // The operations' link-level efficiencies do not set the channel's rate.
  p.coll.efficiency[0] = 1.5;    // all_reduce
  p.coll.efficiency[1] = 0.8;    // all_gather
  p.coll.efficiency[2] = 1.25;   // reduce_scatter
  p.coll_ring_recv_step = 0.25;  // the links' share of the receive-only step: not the channel's either
  p.coll_reduce_step = 0.5;
  p.coll_channel_recv_step = 0.5;
  const auto m = make_transfer_model("nccl", p, NcclEnv::parse({"NCCL_PROTO=Simple"}));
  const double s = 1 << 30;
  const auto data_rate = [&](const CollectivePlan& c) {
    REQUIRE(c.channels == 2);
    REQUIRE(c.algorithm == Algorithm::Ring);
    return c.flow_rate / c.flows.front().wire_bytes;  // per data byte the flow carries: x data = data rate
  };
  // Two channels (NCCL_MAX_NCHANNELS=2: the communicator's channels).
  CommInfo four = h200x4();
  four.coll_channels = 2;
  CommInfo two = four;
  two.nranks = 2;
  const std::vector<int> four_nodes{0, 0, 0, 0}, two_nodes{0, 0};
  // all_gather, 4 ranks: 3 sending steps over 3 + 0.5; the flow carries 0.75 s of data.
  const auto ag4 = m->collective(CollOp::AllGather, 1 << 30, 0, four, four_nodes, {});
  CHECK(data_rate(ag4) * 0.75 * s == doctest::Approx(2 * 20e9 * 3 / 3.5));
  // all_gather, 2 ranks: 1 over 1.5.
  const auto ag2 = m->collective(CollOp::AllGather, 1 << 30, 0, two, two_nodes, {});
  CHECK(data_rate(ag2) * 0.5 * s == doctest::Approx(2 * 20e9 * 1 / 1.5));
  // all_reduce, 4 ranks: 6 over 3 + 3 x 0.5 + 0.5 = 5; its efficiency of 1.5 does not raise it.
  const auto ar4 = m->collective(CollOp::AllReduce, 1 << 30, 0, four, four_nodes, {});
  CHECK(data_rate(ar4) * 1.5 * s == doctest::Approx(2 * 20e9 * 6 / 5));
  // reduce_scatter, 4 ranks: 3 over 1 + 2 x 0.5 + 0.5 = 2.5.
  const auto rs4 = m->collective(CollOp::ReduceScatter, 1 << 30, 0, four, four_nodes, {});
  CHECK(data_rate(rs4) * 0.75 * s == doctest::Approx(2 * 20e9 * 3 / 2.5));
  // Broadcast is a chain: one forwarding step a chunk, the channel's own rate.
  const auto b4 = m->collective(CollOp::Broadcast, 1 << 30, 0, four, four_nodes, {});
  CHECK(data_rate(b4) * s == doctest::Approx(2 * 20e9));
  // LL128 keeps one efficiency per operation where the channels bind: all_gather's 0.8 and the links' share
  // of the receive-only step (3 / 3.25) scale its channel rate.
  const auto m128 = make_transfer_model("nccl", p, NcclEnv::parse({"NCCL_PROTO=LL128"}));
  const auto ag128 = m128->collective(CollOp::AllGather, 1 << 30, 0, four, four_nodes, {});
  REQUIRE(ag128.protocol == Protocol::Ll128);
  CHECK(data_rate(ag128) * 0.75 * s == doctest::Approx(2 * p.coll.channel_bandwidth[1] * 0.8 * 3 / 3.25));
  // Counting every step alike and the receive-only one free (reduce 1, receive-only 0) leaves every ring at
  // the channel's rate.
  ModelParams d = ModelParams::defaults();
  d.coll.channel_bandwidth[2] = 20e9;
  d.coll_reduce_step = 1;
  d.coll_channel_recv_step = 0;
  const auto md = make_transfer_model("nccl", d, NcclEnv::parse({"NCCL_PROTO=Simple"}));
  for (CollOp op : {CollOp::AllGather, CollOp::AllReduce, CollOp::ReduceScatter}) {
    const auto c = md->collective(op, 1 << 30, 0, four, four_nodes, {});
    const double data = op == CollOp::AllReduce ? 1.5 * s : 0.75 * s;
    CHECK(data_rate(c) * data == doctest::Approx(2 * 20e9));
  }
}

TEST_CASE("collective: an LL ring counts reducing steps as forwarding ones and its own receive-only step") {
  // LL copies every line out of its buffer: all_reduce on n ranks costs 2 (n - 1) + ll_recv_step steps a
  // loop, whatever collective.reduce_step says; all_gather n - 1 + ll_recv_step.
  ModelParams p = ModelParams::defaults();
  p.coll.channel_bandwidth[0] = 8e9;
  p.coll_reduce_step = 0.5;
  p.coll_channel_recv_step = 0.25;
  p.coll_ll_recv_step = 0.75;
  const auto m = make_transfer_model("nccl", p, NcclEnv::parse({"NCCL_PROTO=LL"}));
  const double s = 1 << 30;
  CommInfo four = h200x4();
  four.coll_channels = 2;
  CommInfo two = four;
  two.nranks = 2;
  const auto ar2 = m->collective(CollOp::AllReduce, 1 << 30, 0, two, std::vector<int>{0, 0}, {});
  REQUIRE(ar2.protocol == Protocol::Ll);
  REQUIRE(ar2.channels == 2);
  // The flow carries s data bytes as 2 s wire bytes; 2 sending steps over 2.75.
  CHECK(ar2.flow_rate / ar2.flows.front().wire_bytes * s == doctest::Approx(2 * 8e9 * 2 / 2.75));
  const auto ag4 = m->collective(CollOp::AllGather, 1 << 30, 0, four, std::vector<int>{0, 0, 0, 0}, {});
  CHECK(ag4.flow_rate / ag4.flows.front().wire_bytes * 0.75 * s == doctest::Approx(2 * 8e9 * 3 / 3.75));
}

TEST_CASE("collective: NCCL_BUFFSIZE sets a ring Simple step, and with it the last slice's time") {
  // Ring Simple's last slice is min(2 steps, a channel's share / 2), a step being the Simple buffer over
  // NCCL_STEPS; at 1 GiB on 4 ranks the share is large, so the slice is 2 steps: 2 x 4 MiB / 8 with the
  // default buffer, 2 x 1 MiB / 8 with NCCL_BUFFSIZE=1MiB, each moved at one channel's Simple rate.
  const ModelParams p = ModelParams::defaults();
  const auto latency = [&](const std::vector<std::string>& env) {
    return make_transfer_model("nccl", p, NcclEnv::parse(env))
        ->collective(CollOp::AllReduce, 1ULL << 30, 0, h200x4(), std::vector<int>{0, 0, 0, 0}, {})
        .latency;
  };
  const auto base = latency({"NCCL_PROTO=Simple", "NCCL_ALGO=Ring"});
  const auto small = latency({"NCCL_PROTO=Simple", "NCCL_ALGO=Ring", "NCCL_BUFFSIZE=1MiB"});
  const auto big = latency({"NCCL_PROTO=Simple", "NCCL_ALGO=Ring", "NCCL_BUFFSIZE=16MiB"});
  const double rate = p.coll.channel_bandwidth[2];
  const auto slice_ps = [&](double buff) { return 2 * buff / p.steps / rate * 1e12; };
  CHECK(static_cast<double>(base - small) ==
        doctest::Approx(slice_ps(static_cast<double>(p.buffsize)) - slice_ps(1 << 20)).epsilon(1e-6));
  CHECK(static_cast<double>(big - base) ==
        doctest::Approx(slice_ps(16 << 20) - slice_ps(static_cast<double>(p.buffsize))).epsilon(1e-6));
  CHECK(p.buffsize == 4u << 20);
}

TEST_CASE("collective: a Simple ring's last slice drains only as far as the links hold its channels back") {
  // 2 ranks on one NVSwitch machine, 18 NVLinks of 25 GB/s a GPU: 1 GiB all-reduce, Ring Simple.
  const ModelParams p = ModelParams::defaults();
  REQUIRE(p.nvlink_saturation > 0);
  const auto run_with = [](const ModelParams& params, int channels, double gpu_nvlink, int nnodes) {
    CommInfo c = h200x4();
    c.nranks = 2;
    c.nnodes = nnodes;
    c.coll_channels = channels;
    c.gpu_nvlink_bandwidth = gpu_nvlink;
    return make_transfer_model("nccl", params, NcclEnv::parse({"NCCL_PROTO=Simple", "NCCL_ALGO=Ring"}))
        ->collective(CollOp::AllReduce, 1ULL << 30, 0, c, std::vector<int>{0, nnodes - 1}, {});
  };
  const auto run = [&](int channels, double gpu_nvlink, int nnodes) {
    return run_with(p, channels, gpu_nvlink, nnodes);
  };
  // The last slice: 2 Simple steps at one channel's rate (a channel's share of 1 GiB is far larger).
  const double slice_ps =
      2.0 * static_cast<double>(p.buffsize) / p.steps / p.coll.channel_bandwidth[2] * 1e12;
  const double capacity = 18 * 25e9 * p.nvlink_efficiency;
  const double k = p.nvlink_saturation;
  const auto weight = [&](double load) {
    const auto shortfall = [&](double x) { return 1 - 1 / std::pow(1 + std::pow(x, k), 1 / k); };
    return std::min(1.0, shortfall(load / capacity) / shortfall(1.0));
  };
  for (int channels : {1, 4, 8, 16, 24, 32}) {
    CAPTURE(channels);
    const auto unknown = run(channels, 0, 1);  // no NVLink figure: the links are taken to bind
    const auto nvlink = run(channels, 18 * 25e9, 1);
    CHECK(nvlink.flow_rate == unknown.flow_rate);
    const double w = weight(nvlink.flow_rate);
    CHECK(static_cast<double>(unknown.latency - nvlink.latency) ==
          doctest::Approx((1 - w) * slice_ps).epsilon(1e-6).scale(1));
    // A channel limit (a few channels): hardly any of the slice drains.
    if (nvlink.flow_rate < 0.5 * capacity) {
      CHECK(static_cast<double>(unknown.latency - nvlink.latency) > 0.95 * slice_ps);
    }
    if (nvlink.flow_rate >= capacity) CHECK(nvlink.latency == unknown.latency);  // the links bind: all of it
  }
  // A hard NVLink limit: none of it below the capacity, all of it from there.
  ModelParams hard = p;
  hard.nvlink_saturation = 0;
  const auto run_hard = [&](int channels, double gpu_nvlink) {
    return run_with(hard, channels, gpu_nvlink, 1);
  };
  const auto one = run_hard(1, 18 * 25e9);
  REQUIRE(one.flow_rate < capacity);
  CHECK(static_cast<double>(run_hard(1, 0).latency - one.latency) == doctest::Approx(slice_ps).epsilon(1e-6));
  const auto full = run_hard(32, 18 * 25e9);
  REQUIRE(full.flow_rate >= capacity);
  CHECK(full.latency == run_hard(32, 0).latency);
  // Across machines the network, not NVLink, sets the pace: the whole slice drains.
  CHECK(run(1, 18 * 25e9, 2).latency == run(1, 0, 2).latency);
}

TEST_CASE("collective: a ring's receive-only step is one more step of latency, not a chain's or a Tree's") {
  // Latency = base + steps x hop. A ring loop of n ranks sends n - 1 steps (2 (n - 1) for all-reduce) and
  // then receives once more (src/device/*.h runRing); a chain (broadcast, reduce) only sends and forwards, n
  // - 1 steps; a Tree on one node goes up and down its chain, 2 (n - 1) steps.
  ModelParams p = ModelParams::defaults();
  p.coll.base_latency[2] = 10'000'000;  // Simple: 10 us
  p.coll.hop_latency[2] = 1'000'000;    // and 1 us a step
  const auto m = make_transfer_model("nccl", p, NcclEnv::parse({"NCCL_PROTO=Simple"}));
  const std::vector<int> nodes{0, 0, 0, 0};
  const auto latency_us = [&](CollOp op, const CommInfo& c, const std::vector<int>& on) {
    return static_cast<double>(m->collective(op, 4 << 20, 0, c, on, {}).latency) / 1e6;
  };
  // A Simple ring also drains its last slice (half a channel's share here) at a channel's rate: taken out.
  const auto slice_us = [&](const CommInfo& c) {
    const double per_channel = static_cast<double>(4 << 20) / 24 / c.nranks;
    const double step = static_cast<double>(p.buffsize) / p.steps;
    return std::min(2 * step, per_channel / 2) / static_cast<double>(p.coll.channel_bandwidth[2]) * 1e6;
  };
  CHECK(latency_us(CollOp::AllGather, h200x4(), nodes) - slice_us(h200x4()) ==
        doctest::Approx(10 + 4 * 1).epsilon(1e-5));
  CHECK(latency_us(CollOp::ReduceScatter, h200x4(), nodes) - slice_us(h200x4()) ==
        doctest::Approx(10 + 4 * 1).epsilon(1e-5));
  CHECK(latency_us(CollOp::AllReduce, h200x4(), nodes) - slice_us(h200x4()) ==
        doctest::Approx(10 + 7 * 1).epsilon(1e-5));
  CHECK(latency_us(CollOp::Broadcast, h200x4(), nodes) == doctest::Approx(10 + 3 * 1).epsilon(1e-5));
  CHECK(latency_us(CollOp::Reduce, h200x4(), nodes) == doctest::Approx(10 + 3 * 1).epsilon(1e-5));
  CommInfo two = h200x4();
  two.nranks = 2;
  CHECK(latency_us(CollOp::AllGather, two, {0, 0}) - slice_us(two) ==
        doctest::Approx(10 + 2 * 1).epsilon(1e-5));
  CHECK(latency_us(CollOp::Reduce, two, {0, 0}) == doctest::Approx(10 + 1 * 1).epsilon(1e-5));
  const auto tree = make_transfer_model("nccl", p, NcclEnv::parse({"NCCL_ALGO=Tree", "NCCL_PROTO=Simple"}))
                        ->collective(CollOp::AllReduce, 4 << 20, 0, h200x4(), nodes, {});
  // A Tree Simple chunk (a channel's share here, under a step) also crosses 5 more hops before the pipeline
  // streams: taken out (see "a Tree Simple chunk crosses ..." below).
  const double fill_us = 5 * (static_cast<double>(4 << 20) / 24) /
                         std::min(static_cast<double>(p.coll.channel_bandwidth[2]), 360e9 / 24) * 1e6;
  CHECK(static_cast<double>(tree.latency) / 1e6 - fill_us == doctest::Approx(10 + 6 * 1).epsilon(1e-5));
}

namespace {

/// One machine of n GPUs on an NVSwitch, NCCL's view of an H200 (18 NVLinks at 20.6 GB/s; ring graph 12
/// channels at 30 GB/s, duplicated to 24).
CommInfo nvswitch_node(int n) {
  CommInfo c = h200x4();
  c.nranks = n;
  c.nvswitch = true;
  c.sm = 90;
  c.nccl_gpu_nvlink = 18 * 20.6e9;
  c.ring_graph_channels = 12;
  // Not the ring graph's 12 x 30 GB/s: a tree graph that was not searched shows (the tuner takes this).
  c.nccl_intra_bandwidth = 300e9;
  return c;
}

/// Wire bytes of each flow of a plan, by (source, destination).
std::map<std::pair<int, int>, double> flow_bytes(const CollectivePlan& plan) {
  std::map<std::pair<int, int>, double> out;
  for (const auto& f : plan.flows) out[{f.src, f.dst}] += f.wire_bytes;
  return out;
}

}  // namespace

TEST_CASE("collective: on an NVSwitch machine Tree runs NCCL's tree graph: one chain on 4 GPUs, three on 3") {
  // NCCL_DEBUG_SUBSYS=GRAPH on 4x H200 (validation/data/h200x4/tree/*/meta/tree_graph_g0*.log): 4 GPUs get
  // the chain 0-1-2-3 on all 12 tree channels (30 GB/s a channel; 40 would need every GPU's link in exactly 9
  // of 12 channels, which the search's replay of the first chain never reaches); 3 GPUs get 12 channels at 40
  // GB/s with different chains: 6 of 0-1-2, 3 of 1-2-0 and 3 of 2-0-1 (root first).
  const std::vector<std::string> env{"NCCL_ALGO=Tree", "NCCL_PROTO=Simple"};
  const double s = 1 << 30;
  const auto four = flow_bytes(plan(CollOp::AllReduce, 1 << 30, nvswitch_node(4), {0, 0, 0, 0}, env));
  REQUIRE(four.size() == 6);
  for (int i = 0; i < 3; ++i) {
    CHECK(four.at({i, i + 1}) == doctest::Approx(s / 0.92));  // broadcast down
    CHECK(four.at({i + 1, i}) == doctest::Approx(s / 0.92));  // reduce up
  }
  // 3 GPUs: pairs 0-1 and 1-2 are on the chains of 18 of 24 channels, pair 0-2 on 12 of them, each way.
  const auto three = flow_bytes(plan(CollOp::AllReduce, 1 << 30, nvswitch_node(3), {0, 0, 0}, env));
  REQUIRE(three.size() == 6);
  for (const auto& [a, b] : {std::pair{0, 1}, {1, 2}}) {
    CHECK(three.at({a, b}) == doctest::Approx(0.75 * s / 0.92));
    CHECK(three.at({b, a}) == doctest::Approx(0.75 * s / 0.92));
  }
  CHECK(three.at({0, 2}) == doctest::Approx(0.5 * s / 0.92));
  CHECK(three.at({2, 0}) == doctest::Approx(0.5 * s / 0.92));
  // A channel limit keeps the first channels: 8 of them are 6 of 0-1-2 and 2 of 1-2-0.
  CommInfo eight = nvswitch_node(3);
  eight.coll_channels = 8;
  const auto limited = flow_bytes(plan(CollOp::AllReduce, 1 << 30, eight, {0, 0, 0}, env));
  CHECK(limited.at({0, 1}) == doctest::Approx(0.75 * s / 0.92));
  CHECK(limited.at({1, 2}) == doctest::Approx(s / 0.92));
  CHECK(limited.at({0, 2}) == doctest::Approx(0.25 * s / 0.92));
  // A pair on some channels' chains only has their share of the per-channel cap: 18 of 24, 12 of 24.
  const auto three_plan = plan(CollOp::AllReduce, 1 << 30, nvswitch_node(3), {0, 0, 0}, env);
  for (const auto& f : three_plan.flows) {
    CHECK(f.channel_share == doctest::Approx(f.src + f.dst == 2 ? 0.5 : 0.75));
  }
  // 8 GPUs: one chain on every channel, as NCCL logs on 8-GPU NVSwitch machines show.
  const auto eight_gpus =
      flow_bytes(plan(CollOp::AllReduce, 1 << 30, nvswitch_node(8), {0, 0, 0, 0, 0, 0, 0, 0}, env));
  REQUIRE(eight_gpus.size() == 14);
  for (int i = 0; i < 7; ++i) CHECK(eight_gpus.at({i, i + 1}) == doctest::Approx(s / 0.92));
  // No compute capability (a GPU not in the catalogue): no search, one chain in ring order.
  CommInfo unknown = nvswitch_node(3);
  unknown.sm = 0;
  CHECK(flow_bytes(plan(CollOp::AllReduce, 1 << 30, unknown, {0, 0, 0}, env)).count({0, 2}) == 0);
  // Without an NVSwitch (a hand-made CommInfo, or PCIe) the tree is one chain in ring order.
  const auto plain = flow_bytes(plan(CollOp::AllReduce, 1 << 30, h200x4(), {0, 0, 0, 0}, env));
  REQUIRE(plain.size() == four.size());
  for (const auto& [pair, bytes] : four) CHECK(plain.at(pair) == doctest::Approx(bytes));
  CommInfo three_plain = h200x4();
  three_plain.nranks = 3;
  const auto chain3 = flow_bytes(plan(CollOp::AllReduce, 1 << 30, three_plain, {0, 0, 0}, env));
  CHECK(chain3.count({0, 2}) == 0);
  CHECK(chain3.at({0, 1}) == doctest::Approx(s / 0.92));
}

TEST_CASE("collective: NCCL's tuner ranks Tree by the tree graph's bandwidth, not the ring's") {
  // 3 GPUs: tree graph 12 x 40 GB/s = 480 GB/s (the ring's 360). NCCL's estimate for Tree Simple at 1 GiB:
  // 8.4 + 2 x 2 x 4.0 us + bytes / (1000 x min(480 x 0.92, 12 x 38.7) x 0.5), the largest tree correction 1.
  // 4 GPUs: 12 x 30 GB/s = 360 (nvswitch_node's 300 stands for a graph not searched).
  const auto t = plan(CollOp::AllReduce, 1ULL << 30, nvswitch_node(3), {0, 0, 0},
                      {"NCCL_ALGO=Tree", "NCCL_PROTO=Simple"});
  CHECK(t.nccl_estimate_us == doctest::Approx(8.4 + 4 * 4.0 + (1ULL << 30) / (1000.0 * 480 * 0.92 * 0.5)));
  const auto f = plan(CollOp::AllReduce, 1ULL << 30, nvswitch_node(4), {0, 0, 0, 0},
                      {"NCCL_ALGO=Tree", "NCCL_PROTO=Simple"});
  CHECK(f.nccl_estimate_us == doctest::Approx(8.4 + 6 * 4.0 + (1ULL << 30) / (1000.0 * 360 * 0.92 * 0.5)));
  // 2 GPUs: 12 x 60 GB/s, capped at the graph's 12 channels x 38.7 (NCCL's own table on 2x H200: Tree Simple
  // 232.2 GB/s), not the communicator's 24.
  const auto two =
      plan(CollOp::AllReduce, 1ULL << 30, nvswitch_node(2), {0, 0}, {"NCCL_ALGO=Tree", "NCCL_PROTO=Simple"});
  CHECK(two.nccl_estimate_us == doctest::Approx(8.4 + 2 * 4.0 + (1ULL << 30) / (1000.0 * 232.2)));
}

TEST_CASE("collective: a Tree Simple chunk crosses every hop of the chain before the pipeline streams") {
  // One step of 512 KiB a chunk (or a channel's whole share, if smaller), 2 (n - 1) hops up and down; each
  // further hop after the first costs a chunk at the channel's share of NCCL's link (360 GB/s / 24 channels)
  // or at its own rate, whichever is lower. LL and LL128 forward line by line: no fill.
  ModelParams p = ModelParams::defaults();
  p.coll.base_latency[2] = 0;
  p.coll.hop_latency[2] = 0;
  p.coll.channel_bandwidth[2] = 20e9;
  const auto m = make_transfer_model("nccl", p, NcclEnv::parse({"NCCL_ALGO=Tree", "NCCL_PROTO=Simple"}));
  const auto latency_us = [&](std::uint64_t bytes, const CommInfo& c, const std::vector<int>& on) {
    return static_cast<double>(m->collective(CollOp::AllReduce, bytes, 0, c, on, {}).latency) / 1e6;
  };
  const double step = static_cast<double>(p.buffsize) / p.steps;
  CHECK(step == 512 * 1024);
  const double hop_us = step / 15e9 * 1e6;           // min(20, 360 / 24) GB/s
  const double switch_hop_us = step / 12.5e9 * 1e6;  // nvswitch_node: min(20, 300 / 24) GB/s
  CHECK(latency_us(64 << 20, h200x4(), {0, 0, 0, 0}) == doctest::Approx(5 * hop_us).epsilon(1e-6));
  CHECK(latency_us(64 << 20, nvswitch_node(3), {0, 0, 0}) ==
        doctest::Approx(3 * switch_hop_us).epsilon(1e-6));
  CHECK(latency_us(64 << 20, nvswitch_node(2), {0, 0}) == doctest::Approx(switch_hop_us).epsilon(1e-6));
  // 1 MiB on 24 channels: a chunk is a channel's share.
  CHECK(latency_us(1 << 20, h200x4(), {0, 0, 0, 0}) ==
        doctest::Approx(5 * (1048576.0 / 24) / 15e9 * 1e6).epsilon(1e-6));
  // Few channels: the channel's own rate is the lower one.
  CommInfo four = h200x4();
  four.coll_channels = 4;
  CHECK(latency_us(64 << 20, four, {0, 0, 0, 0}) == doctest::Approx(5 * step / 20e9 * 1e6).epsilon(1e-6));
  const auto ll128 =
      make_transfer_model("nccl", p, NcclEnv::parse({"NCCL_ALGO=Tree", "NCCL_PROTO=LL128"}))
          ->collective(CollOp::AllReduce, 64 << 20, 0, h200x4(), std::vector<int>{0, 0, 0, 0}, {});
  CHECK(ll128.latency == p.coll.base_latency[1] + 6 * p.coll.hop_latency[1]);
}

TEST_CASE("collective: a tree channel runs at its slowest thread group's rate") {
  // runTreeSplit: Simple 384 / 256 threads of 640, LL and LL128 448 / 192. Against a ring channel (512
  // threads, 640 for LL128, three memory streams an element): a middle rank's broadcast group (three
  // streams) where there is one; else LL/LL128's leaf broadcast group (two), Simple's root (640 threads,
  // four). The tree efficiency inflates the wire bytes, so the cap is raised by as much.
  const ModelParams p = ModelParams::defaults();
  const auto rate = [&](const std::string& proto, int n) {
    std::vector<int> on(static_cast<std::size_t>(n), 0);
    CommInfo c = h200x4();
    c.nranks = n;
    const auto t = make_transfer_model("nccl", p, NcclEnv::parse({"NCCL_ALGO=Tree", "NCCL_PROTO=" + proto}))
                       ->collective(CollOp::AllReduce, 1 << 30, 0, c, on, {});
    REQUIRE(t.channels == 24);
    return t.flow_rate;
  };
  const double e = p.coll_tree_efficiency;
  const auto cbw = [&](int proto) { return 24 * static_cast<double>(p.coll.channel_bandwidth[proto]); };
  CHECK(rate("Simple", 4) == doctest::Approx(cbw(2) * 256.0 / 512 / e));
  CHECK(rate("Simple", 2) == doctest::Approx(cbw(2) * 640.0 / 512 * 3 / 4 / e));
  CHECK(rate("LL128", 4) == doctest::Approx(cbw(1) * 128.0 / 120 * 192.0 / 640 / e));
  CHECK(rate("LL128", 2) == doctest::Approx(cbw(1) * 128.0 / 120 * 192.0 / 640 * 1.5 / e));
  CHECK(rate("LL", 3) == doctest::Approx(cbw(0) / p.ll.wire_efficiency * 192.0 / 512 / e));
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
  // Without NVLink there is no PXN: a ring leaves through the other NIC's GPU (NCCL's crossNic fallback).
  CommInfo c = h200x4();
  c.nranks = 8;
  c.nnodes = 2;
  c.all_nvlink = false;
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

namespace {

/// Two machines of `per` GPUs on NVSwitch (every pair NVLink P2P) whose rank r reaches NIC nics[r] (-1:
/// none).
CollectivePlan two_machines(CollOp op, std::uint64_t bytes, int per, const std::vector<int>& nics,
                            int root = 0) {
  CommInfo c = h200x4();
  c.nranks = 2 * per;
  c.nnodes = 2;
  c.all_nvlink = true;
  std::vector<int> nodes(static_cast<std::size_t>(per), 0);
  nodes.insert(nodes.end(), static_cast<std::size_t>(per), 1);
  const auto m = make_transfer_model("nccl", ModelParams::defaults(),
                                     NcclEnv::parse({"NCCL_ALGO=Ring", "NCCL_PROTO=Simple"}));
  return m->collective(op, bytes, root, c, nodes, nics);
}

/// Bytes leaving machine 0 through each NIC (flows from machine 0 to machine 1, by the sender's NIC).
std::map<int, double> bytes_out_by_nic(const CollectivePlan& p, int per, const std::vector<int>& nics) {
  std::map<int, double> out;
  for (const CollFlow& f : p.flows) {
    if (f.src < per && f.dst >= per) out[nics[static_cast<std::size_t>(f.src)]] += f.wire_bytes;
  }
  return out;
}

}  // namespace

TEST_CASE("collective: with NVLink and fewer NICs a ring leaves through the NIC it entered by, over PXN") {
  // 2 machines x 4 GPUs, NICs only beside GPUs 0 and 1 (NIC 0, NIC 1). NCCL (crossNic 0 first, then PXN
  // paths to the NIC) runs rings NIC n -> GPU n -> the others -> NVLink to GPU n -> NIC n: no rail crossing.
  const std::vector<int> nics{0, 1, -1, -1, 0, 1, -1, -1};
  const std::uint64_t s = 1ULL << 30;
  const CollectivePlan p = two_machines(CollOp::AllReduce, s, 4, nics);
  // 4 rings (2 per NIC), each 8 ring edges plus 2 PXN hops (one per machine).
  REQUIRE(p.flows.size() == 4 * 10);
  const double per_edge = 2.0 * 7 / 8 * static_cast<double>(s) / 4;
  std::map<int, int> leaving, entering, relayed_to;
  for (const CollFlow& f : p.flows) {
    CHECK(f.wire_bytes == doctest::Approx(per_edge));
    const bool cross = (f.src < 4) != (f.dst < 4);
    if (!cross) continue;
    // Both ends own a NIC, and the same one: the ring stays on its rail.
    CHECK(nics[static_cast<std::size_t>(f.src)] >= 0);
    CHECK(nics[static_cast<std::size_t>(f.src)] == nics[static_cast<std::size_t>(f.dst)]);
    ++leaving[f.src];
    ++entering[f.dst];
  }
  // The flow before each crossing is the PXN hop: the ring's last GPU on that machine to the NIC's GPU.
  for (std::size_t i = 0; i < p.flows.size(); ++i) {
    const CollFlow& f = p.flows[i];
    if ((f.src < 4) == (f.dst < 4)) continue;
    REQUIRE(i > 0);
    CHECK(p.flows[i - 1].dst == f.src);
    CHECK(p.flows[i - 1].src != f.src);
    CHECK((p.flows[i - 1].src < 4) == (f.src < 4));
    ++relayed_to[f.src];
  }
  for (int r : {0, 1, 4, 5}) {
    CHECK(leaving[r] == 2);
    CHECK(entering[r] == 2);
    CHECK(relayed_to[r] == 2);
  }
  // Closed form: each NIC sends 2(n-1)/n x S / (NICs) out of each machine.
  for (const auto& [nic, b] : bytes_out_by_nic(p, 4, nics)) {
    CAPTURE(nic);
    CHECK(b == doctest::Approx(2.0 * 7 / 8 * static_cast<double>(s) / 2));
  }
  // A broadcast chain follows the same rings: n - 1 edges, plus a PXN hop where it leaves a machine.
  const CollectivePlan b = two_machines(CollOp::Broadcast, s, 4, nics);
  for (const CollFlow& f : b.flows) {
    if ((f.src < 4) != (f.dst < 4))
      CHECK(nics[static_cast<std::size_t>(f.src)] == nics[static_cast<std::size_t>(f.dst)]);
  }
}

TEST_CASE("collective: one NIC per machine carries every ring, entering and leaving through its GPU") {
  const std::vector<int> nics{0, -1, -1, -1, 0, -1, -1, -1};
  const std::uint64_t s = 1ULL << 30;
  const CollectivePlan p = two_machines(CollOp::AllGather, s, 4, nics);
  REQUIRE(p.flows.size() == 4 * 10);
  for (const CollFlow& f : p.flows) {
    if ((f.src < 4) != (f.dst < 4)) CHECK(((f.src == 0 && f.dst == 4) || (f.src == 4 && f.dst == 0)));
  }
  // All-gather: (n-1)/n x S leaves each machine, all of it through the one NIC.
  const auto out = bytes_out_by_nic(p, 4, nics);
  REQUIRE(out.size() == 1);
  CHECK(out.at(0) == doctest::Approx(7.0 / 8 * static_cast<double>(s)));
}

TEST_CASE("collective: a NIC shared by two GPUs closes the ring through the second GPU, without PXN") {
  // NIC 0 on the PCIe switch of GPUs 0 and 1 (PIX to both): NCCL finds NIC 0 -> GPU 0 -> .. -> GPU 1 -> NIC
  // 0.
  const std::vector<int> nics{0, 0, -1, -1, 0, 0, -1, -1};
  const CollectivePlan p = two_machines(CollOp::AllReduce, 1ULL << 30, 4, nics);
  REQUIRE(p.flows.size() == 4 * 8);  // no PXN hop
  std::map<int, int> leaving, entering;
  for (const CollFlow& f : p.flows) {
    if ((f.src < 4) == (f.dst < 4)) continue;
    ++leaving[f.src];
    ++entering[f.dst];
  }
  for (int r : {0, 1, 4, 5}) {
    CHECK(leaving[r] == 2);
    CHECK(entering[r] == 2);
  }
}

TEST_CASE("collective: every NIC gets whole rings: 3 NICs of 8 GPUs give 6 rings, 2 per NIC") {
  std::vector<int> nics{0, 1, 2, -1, -1, -1, -1, -1};
  nics.insert(nics.end(), nics.begin(), nics.end());
  const std::uint64_t s = 3ULL << 30;
  const CollectivePlan p = two_machines(CollOp::ReduceScatter, s, 8, nics);
  REQUIRE(p.flows.size() == 6 * (16 + 2));
  const auto out = bytes_out_by_nic(p, 8, nics);
  REQUIRE(out.size() == 3);
  for (const auto& [nic, b] : out) {
    CAPTURE(nic);
    CHECK(b == doctest::Approx(15.0 / 16 * static_cast<double>(s) / 3));
  }
}
