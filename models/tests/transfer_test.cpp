// Model tests for the NCCL send/recv model: transport rule, channel counts and steps, LL/Simple switch point.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <vector>

#include "commsim/core/error.hpp"
#include "commsim/models/nccl_env.hpp"
#include "commsim/models/params.hpp"
#include "commsim/models/transfer.hpp"

using namespace commsim;
using namespace commsim::models;

namespace {

PairInfo nvswitch_pair() {
  PairInfo p;
  p.path = PathType::Nvl;
  p.nvlinks = 18;
  p.nvlink_bandwidth = 25e9;
  return p;
}

CommInfo comm(const TransferModel& m, int nranks, const PairInfo& pair) {
  std::vector<PairInfo> pairs(static_cast<std::size_t>(nranks * (nranks - 1)), pair);
  return m.comm_info(nranks, 1, pairs);
}

std::unique_ptr<TransferModel> nccl(std::vector<std::string> env = {}) {
  return make_transfer_model("nccl", ModelParams::defaults(), NcclEnv::parse(env));
}

}  // namespace

TEST_CASE("transfer: NCCL's channel counts on an 18-link NVSwitch machine (as its INFO log reports)") {
  const auto m = nccl();
  const CommInfo c = comm(*m, 4, nvswitch_pair());
  CHECK(c.coll_channels == 24);  // 12 rings at 30 GB/s, duplicated
  CHECK(c.p2p_channels == 32);
  CHECK(c.p2p_channels_per_peer == 32);
  CHECK(c.p2p_chunksize == 512 * 1024);  // all NVLink: NCCL_P2P_NVL_CHUNKSIZE
}

TEST_CASE(
    "transfer: a communicator's NVLink capacity per ring edge, only where every pair is P2P over NVLink") {
  const auto m = nccl();
  // NVSwitch: each GPU's 18 links of 25 GB/s (the topology's rate, not NCCL's 20.6 GB/s a link).
  CHECK(comm(*m, 2, nvswitch_pair()).gpu_nvlink_bandwidth == doctest::Approx(18 * 25e9));
  CHECK(comm(*m, 4, nvswitch_pair()).gpu_nvlink_bandwidth == doctest::Approx(18 * 25e9));
  CHECK(comm(*m, 4, nvswitch_pair()).nccl_gpu_nvlink == doctest::Approx(18 * 20.6e9));
  // Direct NVLink: the thinnest bundle a pair of the communicator has.
  PairInfo thin = nvswitch_pair();
  thin.nvlinks = 4;
  thin.nvlink_bandwidth = 20e9;
  std::vector<PairInfo> pairs(12, nvswitch_pair());
  pairs[5] = thin;
  CHECK(m->comm_info(4, 1, pairs).gpu_nvlink_bandwidth == doctest::Approx(4 * 20e9));
  // Not P2P over NVLink for every pair: no NVLink figure (the last slice is taken to drain in full).
  CHECK(comm(*nccl({"NCCL_P2P_DISABLE=1"}), 2, nvswitch_pair()).gpu_nvlink_bandwidth == 0);
  PairInfo pix;
  pix.path = PathType::Pix;
  CHECK(comm(*m, 2, pix).gpu_nvlink_bandwidth == 0);
}

TEST_CASE("transfer: channel stepping follows addP2pToPlan (2 and 4 ranks)") {
  const auto m = nccl();
  const PairInfo p = nvswitch_pair();
  const CommInfo c2 = comm(*m, 2, p);
  const CommInfo c4 = comm(*m, 4, p);
  // 2 ranks: at most 16 channels until a part exceeds 32 chunks (16 MiB), then 32.
  CHECK(m->plan(1 << 20, p, c2, true).channels == 16);
  CHECK(m->plan(256u << 20, p, c2, true).channels == 16);
  CHECK(m->plan(512u << 20, p, c2, true).channels == 32);
  // 4 ranks: 8 channels up to 128 MiB, 16 at 256 MiB, 32 at 512 MiB.
  CHECK(m->plan(128u << 20, p, c4, true).channels == 8);
  CHECK(m->plan(256u << 20, p, c4, true).channels == 16);
  CHECK(m->plan(512u << 20, p, c4, true).channels == 32);
  // Small Simple messages use one channel per 64 KiB (minPart = chunk / 8).
  const auto t = m->plan(600 * 1024, p, c2, true);
  CHECK(t.protocol == Protocol::Simple);
  CHECK(t.channels == 10);
  // Parts are 4 KiB aligned and cover every byte.
  std::uint64_t total = 0;
  for (const auto& part : t.parts) total += part.bytes;
  CHECK(total == 600 * 1024);
}

TEST_CASE("transfer: LL up to channels x NCCL_P2P_LL_THRESHOLD, Simple above") {
  const auto m = nccl();
  const PairInfo p = nvswitch_pair();
  const CommInfo c = comm(*m, 2, p);
  const std::uint64_t threshold = 32 * 16384;  // 32 channels per peer x 16 KiB
  CHECK(m->plan(threshold, p, c, true).protocol == Protocol::Ll);
  CHECK(m->plan(threshold + 1, p, c, true).protocol == Protocol::Simple);
  // LL moves 8 data bytes per 16-byte line: twice the bytes on the wire.
  const auto ll = m->plan(4096, p, c, true);
  CHECK(ll.parts[0].wire_bytes == doctest::Approx(2.0 * static_cast<double>(ll.parts[0].bytes)));
  // NCCL_PROTO without LL removes LL; a lower threshold moves the switch point.
  CHECK(nccl({"NCCL_PROTO=Simple"})->plan(4096, p, c, true).protocol == Protocol::Simple);
  const auto lowered = nccl({"NCCL_P2P_LL_THRESHOLD=1024"});
  CHECK(lowered->plan(32 * 1024, p, comm(*lowered, 2, p), true).protocol == Protocol::Ll);
  CHECK(lowered->plan(32 * 1024 + 1, p, comm(*lowered, 2, p), true).protocol == Protocol::Simple);
}

TEST_CASE("transfer: the transport rule and NCCL_P2P_LEVEL") {
  PairInfo phb;
  phb.path = PathType::Phb;
  PairInfo pxb;
  pxb.path = PathType::Pxb;
  PairInfo remote;
  remote.same_node = false;
  CHECK(nccl()->transport(pxb) == Transport::P2p);
  CHECK(nccl()->transport(phb) == Transport::Shm);
  CHECK(nccl({"NCCL_P2P_LEVEL=SYS"})->transport(phb) == Transport::P2p);
  CHECK(nccl({"NCCL_P2P_LEVEL=PIX"})->transport(pxb) == Transport::Shm);
  CHECK(nccl({"NCCL_P2P_DISABLE=1"})->transport(nvswitch_pair()) == Transport::Shm);
  CHECK(nccl({"NCCL_P2P_DISABLE=1", "NCCL_SHM_DISABLE=1"})->transport(pxb) == Transport::Net);
  CHECK(nccl()->transport(remote) == Transport::Net);
}

TEST_CASE("transfer: PCIe and network peers get 2 channels per peer, and PCIe chunks are 128 KiB") {
  const auto m = nccl();
  PairInfo pix;
  pix.path = PathType::Pix;
  const CommInfo c = comm(*m, 2, pix);
  CHECK(c.p2p_channels_per_peer == 2);
  CHECK(c.p2p_chunksize == 128 * 1024);
  CHECK(nccl({"NCCL_BUFFSIZE=262144"})->comm_info(2, 1, std::vector<PairInfo>(2, pix)).p2p_chunksize ==
        32768);
  PairInfo remote;
  remote.same_node = false;
  const CommInfo net = m->comm_info(16, 2, std::vector<PairInfo>(16, remote));
  CHECK(net.p2p_channels_per_peer <= 2);
  CHECK(nccl({"NCCL_NCHANNELS_PER_NET_PEER=1"})
            ->comm_info(16, 2, std::vector<PairInfo>(16, remote))
            .p2p_channels_per_peer == 1);
}

TEST_CASE("transfer: NCCL_MIN/MAX_NCHANNELS clamp the channels") {
  const PairInfo p = nvswitch_pair();
  const auto few = nccl({"NCCL_MAX_NCHANNELS=4"});
  const CommInfo c = comm(*few, 2, p);
  CHECK(c.coll_channels == 4);
  CHECK(c.p2p_channels == 4);
  CHECK(few->plan(1u << 30, p, c, true).channels == 4);
}

TEST_CASE("transfer: the model registry names every model and rejects unknown ones") {
  CHECK(transfer_models().size() >= 2);
  for (const auto& info : transfer_models()) {
    CHECK(!info.description.empty());
    CHECK(make_transfer_model(info.name, ModelParams::defaults(), {}) != nullptr);
  }
  CHECK_THROWS_WITH_AS(make_transfer_model("magic", ModelParams::defaults(), {}),
                       doctest::Contains("valid models: nccl"), UsageError);
}

TEST_CASE("nccl_env: unknown knobs and bad values are usage errors that list what is valid") {
  CHECK_THROWS_WITH_AS(NcclEnv::parse({"NCCL_FOO=1"}), doctest::Contains("NCCL_P2P_DISABLE"), UsageError);
  CHECK_THROWS_WITH_AS(NcclEnv::parse({"NCCL_PROTO=LL256"}), doctest::Contains("valid: LL, LL128, Simple"),
                       UsageError);
  CHECK_THROWS_AS(NcclEnv::parse({"NCCL_P2P_DISABLE=yes"}), UsageError);
  CHECK_THROWS_AS(NcclEnv::parse({"NCCL_P2P_LEVEL=FAR"}), UsageError);
  CHECK_THROWS_AS(NcclEnv::parse({"NCCL_BUFFSIZE=12"}), UsageError);
  CHECK_THROWS_AS(NcclEnv::parse({"NCCL_MIN_NCHANNELS=8", "NCCL_MAX_NCHANNELS=4"}), UsageError);
  CHECK_THROWS_AS(NcclEnv::parse({"NCCL_PROTO"}), UsageError);
  const NcclEnv e = NcclEnv::parse({"NCCL_PROTO=^LL", "NCCL_P2P_LEVEL=2", "NCCL_BUFFSIZE=8MiB"});
  CHECK_FALSE(e.proto_ll);
  CHECK(e.proto_simple);
  CHECK(*e.p2p_level == PathType::Pxb);
  CHECK(*e.buffsize == 8u << 20);
}

TEST_CASE("params: fitted sets overlay the defaults, unknown keys and unit-less values are located errors") {
  const ModelParams p =
      ModelParams::parse("[simple]\nchannel_bandwidth = \"21GBps\"\n", "x.toml", ModelParams::defaults());
  CHECK(p.simple.channel_bandwidth == doctest::Approx(21e9));
  CHECK(p.ll.channel_bandwidth == ModelParams::defaults().ll.channel_bandwidth);
  CHECK_THROWS_WITH_AS(
      ModelParams::parse("[simple]\nchannel_bandwidth = 21\n", "x.toml", ModelParams::defaults()),
      doctest::Contains("x.toml:2:21"), InputError);
  CHECK_THROWS_WITH_AS(
      ModelParams::parse("[simple]\nchanel_bandwidth = \"21GBps\"\n", "x.toml", ModelParams::defaults()),
      doctest::Contains("unknown key"), InputError);
  CHECK_THROWS_WITH_AS(
      ModelParams::parse("[simple]\nbase_latency = \"\"\n", "x.toml", ModelParams::defaults()),
      doctest::Contains("empty duration"), InputError);
  CHECK_THROWS_WITH_AS(ModelParams::parse("[magic]\nx = 1\n", "x.toml", ModelParams::defaults()),
                       doctest::Contains("unknown key or section"), InputError);
}

TEST_CASE("transfer: with P2P disabled NCCL's graph runs through host memory, and the tuner sees its rate") {
  PairInfo p = nvswitch_pair();
  p.route_bandwidth = 450e9;  // the direct NVSwitch route
  const CommInfo direct = comm(*nccl(), 4, p);
  CHECK_FALSE(direct.intra_pcie);
  CHECK(direct.nccl_intra_bandwidth > 100e9);
  const CommInfo shm = comm(*nccl({"NCCL_P2P_DISABLE=1"}), 4, p);
  CHECK(shm.intra_pcie);
  CHECK(shm.nccl_intra_bandwidth == doctest::Approx(ModelParams::defaults().shm_bandwidth));
  // A slower direct route still bounds it.
  p.route_bandwidth = 5e9;
  CHECK(comm(*nccl({"NCCL_P2P_DISABLE=1"}), 4, p).nccl_intra_bandwidth == doctest::Approx(5e9));
}

namespace {

/// nccl-tests alltoall on one rank of `n`: the copy to self, then a send and a receive for every other rank.
std::vector<GroupOp> alltoall_group(int n, int rank, std::uint64_t per_peer) {
  std::vector<GroupOp> ops{{GroupOp::Dir::Self, rank, per_peer}};
  for (int s = 1; s < n; ++s) {
    ops.push_back({GroupOp::Dir::Send, (rank + s) % n, per_peer});
    ops.push_back({GroupOp::Dir::Recv, (rank + n - s) % n, per_peer});
  }
  return ops;
}

}  // namespace

TEST_CASE("transfer: a group's rounds share a channel's warps only where NCCL's channel bases overlap") {
  const auto m = nccl();
  const PairInfo p = nvswitch_pair();
  const CommInfo c4 = comm(*m, 4, p);
  const std::vector<int> one_node(4, 0);
  // 64 MiB over 4 ranks (16 MiB a peer): 8 parts a round from bases 0, 16, 8, 24 of 32 channels, disjoint, so
  // every work has a channel to itself: 10 send and 9 receive warps, a copy to self 19.
  // The warps of each op's parts (PartSlot::warps).
  const auto warps_of = [&](const std::vector<GroupOp>& g, int rank = 0) {
    std::vector<std::vector<std::uint8_t>> out;
    const GroupSlots slots = m->p2p_warps(c4, rank, one_node, g);
    for (std::size_t op = 0; op < slots.size(); ++op) {
      out.emplace_back();
      for (const PartSlot& s : slots[op]) out.back().push_back(s.warps);
    }
    return out;
  };
  auto w = warps_of(alltoall_group(4, 0, 16u << 20));
  REQUIRE(w.size() == 7);
  CHECK(w[0] == std::vector<std::uint8_t>(8, 19));
  for (std::size_t i = 1; i < 7; ++i) CHECK(w[i] == std::vector<std::uint8_t>(8, i % 2 == 1 ? 10 : 9));
  // 1 GiB (256 MiB a peer): 16 parts a round, so every channel carries two rounds: 20 / 2 = 10 warps a work,
  // 5 send and 4 receive.
  w = warps_of(alltoall_group(4, 0, 256u << 20));
  CHECK(w[0] == std::vector<std::uint8_t>(16, 9));
  CHECK(w[1] == std::vector<std::uint8_t>(16, 5));
  CHECK(w[2] == std::vector<std::uint8_t>(16, 4));
  // A send to one peer and a receive from another are different rounds (deltas 1 and 3 on 4 ranks): two
  // one-direction works on disjoint channels, 19 warps each.
  w = warps_of(std::vector<GroupOp>{{GroupOp::Dir::Send, 2, 1u << 20}, {GroupOp::Dir::Recv, 2, 1u << 20}}, 1);
  CHECK(w[0] == std::vector<std::uint8_t>(8, 19));
  CHECK(w[1] == std::vector<std::uint8_t>(8, 19));
  // Send to the next rank and receive from the previous: one round, one work, 10 + 9.
  w = warps_of(std::vector<GroupOp>{{GroupOp::Dir::Send, 2, 1u << 20}, {GroupOp::Dir::Recv, 0, 1u << 20}}, 1);
  CHECK(w[0] == std::vector<std::uint8_t>(8, 10));
  CHECK(w[1] == std::vector<std::uint8_t>(8, 9));
}

TEST_CASE("transfer: a part's rate follows its warps: solo_speedup above one work's 10, split_rate below") {
  ModelParams params = ModelParams::defaults();
  params.solo_speedup = 1.5;
  params.split_rate = 0.7;
  const auto m = make_transfer_model("nccl", params, NcclEnv::parse({}));
  const PairInfo p = nvswitch_pair();
  const CommInfo c2 = comm(*m, 2, p);
  const double shared = m->plan(64u << 20, p, c2, true).channel_rate;
  // 19 warps: (19 / 10)^(ln 1.5 / ln 1.9) = 1.5.
  CHECK(m->plan(64u << 20, p, c2, false).channel_rate == doctest::Approx(1.5 * shared));
  // 5 send and 4 receive warps: the receive's 4 x 10/9 = 4.44 binds, (4.44 / 10)^(ln 0.7 / ln 0.444) = 0.7.
  const PartWarps half{5, 4};
  const auto t = m->plan(64u << 20, p, c2, std::span<const PartWarps>(&half, 1));
  CHECK(t.channel_rate == doctest::Approx(0.7 * shared));
  // Parts with different warps: the best sets the plan's rate, the others carry their own.
  std::vector<PartWarps> mixed(static_cast<std::size_t>(t.channels), kSharedWarps);
  mixed[0] = half;
  const auto tm = m->plan(64u << 20, p, c2, mixed);
  CHECK(tm.channel_rate == doctest::Approx(shared));
  CHECK(tm.parts[0].rate == doctest::Approx(0.7 * shared));
  CHECK(tm.parts[1].rate == 0);
  // A warp list that matches neither one entry nor the parts is a caller's error.
  std::vector<PartWarps> wrong(3, kSharedWarps);
  CHECK_THROWS_AS(m->plan(64u << 20, p, c2, wrong), Error);
}

TEST_CASE("transfer: below two works' warps, split3_rate sets a second power law (0: split_rate's goes on)") {
  ModelParams params = ModelParams::defaults();
  params.split_rate = 0.7;
  const PairInfo p = nvswitch_pair();
  const PartWarps three{3, 2};  // three works on a channel: the receive's 2 x 10/9 = 2.22 binds
  const PartWarps four{3, 1};   // 1.11: past the anchor, the same law
  const PartWarps two{5, 4};    // 4.44: the anchor itself
  auto rates = [&](const ModelParams& mp) {
    const auto m = make_transfer_model("nccl", mp, NcclEnv::parse({}));
    const CommInfo c2 = comm(*m, 2, p);
    const double shared = m->plan(64u << 20, p, c2, true).channel_rate;
    auto r = [&](PartWarps w) {
      return m->plan(64u << 20, p, c2, std::span<const PartWarps>(&w, 1)).channel_rate / shared;
    };
    return std::array<double, 3>{r(two), r(three), r(four)};
  };
  // Unset: one law, (e / 10)^(ln 0.7 / ln 0.444) all the way down.
  const double g = std::log(0.7) / std::log(4.0 / 9.0);
  const auto one_law = rates(params);
  CHECK(one_law[0] == doctest::Approx(0.7));
  CHECK(one_law[1] == doctest::Approx(std::pow(2.0 / 9.0, g)));
  CHECK(one_law[2] == doctest::Approx(std::pow(1.0 / 9.0, g)));
  // Set: 0.7 at 4.44 warps, 0.4 at 2.22, and (0.4 / 0.7) once more per halving below.
  params.split3_rate = 0.4;
  const auto two_laws = rates(params);
  CHECK(two_laws[0] == doctest::Approx(0.7));
  CHECK(two_laws[1] == doctest::Approx(0.4));
  CHECK(two_laws[2] == doctest::Approx(0.4 * 0.4 / 0.7));
  // Above 4.44 warps nothing changes.
  const auto m = make_transfer_model("nccl", params, NcclEnv::parse({}));
  const CommInfo c2 = comm(*m, 2, p);
  const PartWarps six{7, 6};
  const double shared = m->plan(64u << 20, p, c2, true).channel_rate;
  CHECK(m->plan(64u << 20, p, c2, std::span<const PartWarps>(&six, 1)).channel_rate / shared ==
        doctest::Approx(std::pow(2.0 / 3.0, g)));  // 7 send, 6 receive: 6.67 warps
}

TEST_CASE("transfer: works with other GPUs on one channel share its budget, a copy to self does not count") {
  ModelParams params = ModelParams::defaults();
  params.solo_speedup = 1.5;
  params.split_rate = 0.7;
  params.channel_budget = 1.1;
  const auto m = make_transfer_model("nccl", params, NcclEnv::parse({}));
  const PairInfo p = nvswitch_pair();
  const CommInfo c2 = comm(*m, 2, p);
  const double shared = m->plan(64u << 20, p, c2, true).channel_rate;  // one work, 10 + 9, load 2
  auto rate = [&](PartWarps w) {
    return m->plan(64u << 20, p, c2, std::span<const PartWarps>(&w, 1)).channel_rate;
  };
  // One work that sends and receives (load 2): 2 x 1.1 / 2 = 1.1 does not bind.
  CHECK(rate({10, 9, 2, 2}) == doctest::Approx(shared));
  // Two such works (load 4 at both ends): 2 x 1.1 / 4 = 0.55 binds below split_rate's 0.7.
  CHECK(rate({5, 4, 4, 4}) == doctest::Approx(0.55 * shared));
  // Sharing with a copy to self (load 2): split_rate's 0.7 alone.
  CHECK(rate({5, 4, 2, 2}) == doctest::Approx(0.7 * shared));
  // The busier end binds.
  CHECK(rate({5, 4, 2, 4}) == doctest::Approx(0.55 * shared));
  // A lone direction (load 1): 2.2 does not bind its 1.5.
  CHECK(rate({19, 19, 1, 1}) == doctest::Approx(1.5 * shared));
  // Load not known (0), or no budget: warps alone.
  CHECK(rate({5, 4, 0, 0}) == doctest::Approx(0.7 * shared));
  params.channel_budget = 0;
  const auto free = make_transfer_model("nccl", params, NcclEnv::parse({}));
  const PartWarps busy{5, 4, 8, 8};
  CHECK(free->plan(64u << 20, p, c2, std::span<const PartWarps>(&busy, 1)).channel_rate ==
        doctest::Approx(0.7 * shared));

  // What p2p_warps reports: alltoall on 4 ranks at 1 GiB, 16 parts a round from bases 0, 16, 8, 24 of 32
  // channels. Round 0 (the copy to self) shares channels 0-15 with rounds 3 (0-7) and 2 (8-15): load 2 there;
  // rounds 1 and 2 share 16-23, 1 and 3 share 24-31: load 4.
  const CommInfo c4 = comm(*m, 4, p);
  const std::vector<int> one_node(4, 0);
  const auto slots = m->p2p_warps(c4, 0, one_node, alltoall_group(4, 0, 256u << 20));
  REQUIRE(slots.size() == 7);
  for (const PartSlot& s : slots[0]) CHECK(s.load == 0);  // the copy to self
  // Op 1, the send to rank 1, is round 1 (channels 16-31): load 4 on every part.
  for (const PartSlot& s : slots[1]) CHECK(s.load == 4);
  // Op 5, the send to rank 3, is round 2 (delta 3, base 8): parts 0-7 on channels 8-15 (with the copy, load
  // 2), parts 8-15 on 16-23 (with round 1, load 4).
  const std::span<const PartSlot> r2 = slots[5];
  REQUIRE(r2.size() == 16);
  CHECK(r2[0].load == 2);
  CHECK(r2[7].load == 2);
  CHECK(r2[8].load == 4);
  CHECK(r2[15].load == 4);
}

TEST_CASE("transfer: a copy to self takes its slowest part's time at self_copy_bandwidth per 19 warps") {
  ModelParams params = ModelParams::defaults();
  params.self_copy_bandwidth = 100e9;
  const auto m = make_transfer_model("nccl", params, NcclEnv::parse({}));
  const CommInfo c2 = comm(*m, 2, nvswitch_pair());
  const std::uint8_t lone = 19, half = 9;
  // 32 MiB in 16 parts of 2 MiB: 2 MiB / 100 GB/s = 20.97 us, plus Simple's base latency; half the warps,
  // about twice the time.
  const double t19 =
      static_cast<double>(m->self_copy_time(32u << 20, c2, std::span(&lone, 1)) - params.simple.base_latency);
  const double t9 =
      static_cast<double>(m->self_copy_time(32u << 20, c2, std::span(&half, 1)) - params.simple.base_latency);
  CHECK(t19 == doctest::Approx(2.0 * 1024 * 1024 / 100e9 * 1e12).epsilon(0.001));
  CHECK(t9 == doctest::Approx(t19 * 19.0 / 9.0).epsilon(0.001));
}

TEST_CASE(
    "transfer: sends to and receives from several GPUs at once cost the peer loss, scaled by the port") {
  ModelParams params = ModelParams::defaults();
  params.peer_ramp = 0.2;
  params.peer_ramp_time = 50'000'000;  // 50 us
  params.peer_rate_loss = 0.05;
  const auto m = make_transfer_model("nccl", params, NcclEnv::parse({}));
  const PairInfo p = nvswitch_pair();
  const CommInfo c4 = comm(*m, 4, p);
  const std::vector<int> one_node(4, 0);

  // What p2p_warps reports. An all-to-all on 4 ranks at 16 MiB a peer: three peers each way, 8 channels a
  // round on disjoint bases, 24 channels to other GPUs; the copy to self knows no peers.
  auto slots = m->p2p_warps(c4, 0, one_node, alltoall_group(4, 0, 16u << 20));
  REQUIRE(slots.size() == 7);
  for (const PartSlot& s : slots[0]) CHECK(s.peers == 0);
  for (std::size_t op = 1; op < 7; ++op) {
    for (const PartSlot& s : slots[op]) {
      CHECK(s.peers == 3);
      CHECK(s.channels == 24);
    }
  }
  // One GPU to three (fan-out): no sources, so no peers both ways.
  slots = m->p2p_warps(c4, 0, one_node,
                       std::vector<GroupOp>{{GroupOp::Dir::Send, 1, 1u << 20},
                                            {GroupOp::Dir::Send, 2, 1u << 20},
                                            {GroupOp::Dir::Send, 3, 1u << 20}});
  for (std::size_t op = 0; op < 3; ++op) {
    for (const PartSlot& s : slots[op]) CHECK(s.peers == 0);
  }
  // Send to the next rank, receive from the previous (a ring, a pipeline exchange): one peer each way.
  slots = m->p2p_warps(
      c4, 1, one_node,
      std::vector<GroupOp>{{GroupOp::Dir::Send, 2, 1u << 20}, {GroupOp::Dir::Recv, 0, 1u << 20}});
  for (const PartSlot& s : slots[0]) CHECK(s.peers == 1);

  // The plan: each part's overhead grows by (k - 1) rho^2 (ramp tau (1 - exp(-T / tau)) + loss T), T the
  // part's bytes at the channel's rate, rho the channels' offered rate over the port's.
  const std::uint64_t bytes = 16u << 20;
  const auto plan_of = [&](std::uint8_t peers, std::uint8_t channels) {
    const PartWarps w{10, 9, 2, 2, peers, peers, channels, channels};
    return m->plan(bytes, p, c4, std::span<const PartWarps>(&w, 1));
  };
  const TransferPlan alone = plan_of(1, 24);
  const TransferPlan three = plan_of(3, 24);
  const TransferPlan quiet = plan_of(3, 6);
  REQUIRE(alone.parts.size() == three.parts.size());
  const double port = 18 * 25e9 * params.nvlink_efficiency;
  const double tau = 50e-6;
  for (std::size_t i = 0; i < alone.parts.size(); ++i) {
    const double t = alone.parts[i].wire_bytes / alone.channel_rate;
    const double each = 0.2 * tau * -std::expm1(-t / tau) + 0.05 * t;
    const double rho_busy = std::min(1.0, 24 * params.simple.channel_bandwidth / port);
    const double rho_quiet = std::min(1.0, 6 * params.simple.channel_bandwidth / port);
    CHECK(static_cast<double>(three.parts[i].overhead - alone.parts[i].overhead) ==
          doctest::Approx(2 * rho_busy * rho_busy * each * 1e12).epsilon(1e-6));
    CHECK(static_cast<double>(quiet.parts[i].overhead - alone.parts[i].overhead) ==
          doctest::Approx(2 * rho_quiet * rho_quiet * each * 1e12).epsilon(1e-6));
  }
  // More peers than the three measured are held at three's loss; each end counts with its own pressure, the
  // busier one sets it; a pair without NVLink pays none.
  CHECK(plan_of(7, 24).parts[0].overhead == three.parts[0].overhead);
  {
    const PartWarps one_end{10, 9, 2, 2, 3, 1, 24, 6};
    CHECK(m->plan(bytes, p, c4, std::span<const PartWarps>(&one_end, 1)).parts[0].overhead ==
          three.parts[0].overhead);
    const PartWarps other_end{10, 9, 2, 2, 1, 3, 24, 6};
    CHECK(m->plan(bytes, p, c4, std::span<const PartWarps>(&other_end, 1)).parts[0].overhead ==
          quiet.parts[0].overhead);
    PairInfo pcie = p;
    pcie.path = PathType::Pxb;
    pcie.nvlinks = 0;
    const CommInfo cp = comm(*m, 4, pcie);
    const PartWarps w3{10, 9, 2, 2, 3, 3, 24, 24}, w1{10, 9, 2, 2, 1, 1, 24, 24};
    CHECK(m->plan(bytes, pcie, cp, std::span<const PartWarps>(&w3, 1)).parts[0].overhead ==
          m->plan(bytes, pcie, cp, std::span<const PartWarps>(&w1, 1)).parts[0].overhead);
  }
  // Peers on another machine do not count: 2 machines of 2 GPUs, an all-to-all leaves one peer of rank 0's
  // machine each way.
  {
    const CommInfo c22 = m->comm_info(4, 2, std::vector<PairInfo>(12, p));
    const auto two = m->p2p_warps(c22, 0, std::vector<int>{0, 0, 1, 1}, alltoall_group(4, 0, 16u << 20));
    for (std::size_t op = 1; op < two.size(); ++op) {
      for (const PartSlot& s : two[op]) CHECK(s.peers == 1);
    }
  }
  // No loss set: nothing changes.
  const auto plain = nccl();
  const PartWarps w3{10, 9, 2, 2, 3, 3, 24, 24}, w1{10, 9, 2, 2, 1, 1, 24, 24};
  CHECK(plain->plan(bytes, p, c4, std::span<const PartWarps>(&w3, 1)).parts[0].overhead ==
        plain->plan(bytes, p, c4, std::span<const PartWarps>(&w1, 1)).parts[0].overhead);
}

TEST_CASE(
    "transfer: a part over NVLink that sends and receives starts slower, by the port ramp, scaled by the "
    "port") {
  ModelParams params = ModelParams::defaults();
  params.port_ramp = 0.2;
  params.port_ramp_time = 160'000'000;  // 160 us
  const auto m = make_transfer_model("nccl", params, NcclEnv::parse({}));
  const auto plain = nccl();
  const PairInfo p = nvswitch_pair();
  const CommInfo c2 = comm(*m, 2, p);
  const CommInfo c2_plain = comm(*plain, 2, p);
  const double port = 18 * 25e9 * params.nvlink_efficiency;
  const double tau = 160e-6;
  // A part of nominal time T whose ends send to and receive from k >= 1 peers takes rho^2 ramp tau (1 -
  // exp(-T / tau)) longer, however many (the peer loss for k > 1 is apart, and 0 here), rho the busier end's
  // channels at the channel rate over the port's rate; a lone direction (k = 0) pays none.
  for (const std::uint64_t bytes :
       {std::uint64_t{1} << 20, std::uint64_t{64} << 20, std::uint64_t{1} << 30}) {
    for (const int channels : {4, 8, 16, 32}) {
      for (const int peers : {0, 1, 3}) {
        CAPTURE(bytes);
        CAPTURE(channels);
        CAPTURE(peers);
        const auto ch = static_cast<std::uint8_t>(channels);
        const auto k = static_cast<std::uint8_t>(peers);
        const PartWarps w{10, 9, 2, 2, k, k, ch, ch};
        const TransferPlan ramp = m->plan(bytes, p, c2, std::span<const PartWarps>(&w, 1));
        const TransferPlan none = plain->plan(bytes, p, c2_plain, std::span<const PartWarps>(&w, 1));
        REQUIRE(ramp.parts.size() == none.parts.size());
        const double rho = peers > 0 ? std::min(1.0, channels * params.simple.channel_bandwidth / port) : 0.0;
        for (std::size_t i = 0; i < ramp.parts.size(); ++i) {
          const double t = ramp.parts[i].wire_bytes / ramp.channel_rate;
          // (to the picosecond the overhead is rounded to)
          CHECK(std::fabs(static_cast<double>(ramp.parts[i].overhead - none.parts[i].overhead) -
                          rho * rho * 0.2 * tau * -std::expm1(-t / tau) * 1e12) <= 1.0);
        }
      }
    }
  }
  // The busier end that sends and receives sets it; an end of a lone direction does not count; ends whose
  // channels are not known, and pairs without NVLink, pay none.
  const std::uint64_t bytes = 64u << 20;
  const auto overhead = [&](const TransferModel& model, const PairInfo& pair, const PartWarps& w) {
    return model.plan(bytes, pair, comm(model, 2, pair), std::span<const PartWarps>(&w, 1)).parts[0].overhead;
  };
  CHECK(overhead(*m, p, PartWarps{10, 9, 2, 2, 1, 1, 32, 4}) ==
        overhead(*m, p, PartWarps{10, 9, 2, 2, 1, 1, 32, 32}));
  CHECK(overhead(*m, p, PartWarps{10, 9, 2, 2, 1, 1, 4, 32}) ==
        overhead(*m, p, PartWarps{10, 9, 2, 2, 1, 1, 32, 32}));
  CHECK(overhead(*m, p, PartWarps{10, 9, 2, 2, 1, 1, 32, 32}) >
        overhead(*plain, p, PartWarps{10, 9, 2, 2, 1, 1, 32, 32}));
  CHECK(overhead(*m, p, PartWarps{10, 9, 2, 2, 1, 0, 4, 32}) ==
        overhead(*m, p, PartWarps{10, 9, 2, 2, 1, 1, 4, 4}));
  CHECK(overhead(*m, p, PartWarps{10, 9, 2, 2, 0, 0, 32, 32}) ==
        overhead(*plain, p, PartWarps{10, 9, 2, 2, 0, 0, 32, 32}));
  CHECK(overhead(*m, p, PartWarps{10, 9, 2, 2, 1, 1, 0, 0}) ==
        overhead(*plain, p, PartWarps{10, 9, 2, 2, 1, 1, 0, 0}));
  PairInfo pcie = p;
  pcie.path = PathType::Pxb;
  pcie.nvlinks = 0;
  CHECK(overhead(*m, pcie, PartWarps{10, 9, 2, 2, 1, 1, 32, 32}) ==
        overhead(*plain, pcie, PartWarps{10, 9, 2, 2, 1, 1, 32, 32}));
}

TEST_CASE("transfer: host.launch_scale scales every host cost of an enqueue, and 1 leaves them exact") {
  ModelParams p = ModelParams::defaults();
  p.launch_base = 2'000'000;      // 2 us
  p.launch_per_gpu = 4'000'000;   // 4 us a GPU
  p.launch_per_op = 250'000;      // 0.25 us a send or receive
  p.launch_per_coll = 1'000'000;  // 1 us a collective
  p.launch_compute = 2'500'000;   // 2.5 us
  const auto plain = make_transfer_model("nccl", p, NcclEnv::parse({}));
  // One thread over 2 GPUs, 4 operations, no collective: 2 + 2 x 4 + 4 x 0.25 = 11 us.
  CHECK(plain->host_launch_time(2, 4, 0) == 11'000'000);
  CHECK(plain->host_launch_time(1, 0, 1) == 7'000'000);
  CHECK(plain->compute_launch_time() == 2'500'000);
  p.launch_scale = 1.5;  // a host half as slow again at every step
  const auto slow = make_transfer_model("nccl", p, NcclEnv::parse({}));
  CHECK(slow->host_launch_time(2, 4, 0) == 16'500'000);
  CHECK(slow->host_launch_time(1, 0, 1) == 10'500'000);
  CHECK(slow->compute_launch_time() == 3'750'000);
  // Read from a parameter file as a plain ratio; a unit or a non-positive value is refused.
  CHECK(ModelParams::parse("[host]\nlaunch_scale = 0.8\n", "<t>", p).launch_scale == doctest::Approx(0.8));
  CHECK_THROWS(ModelParams::parse("[host]\nlaunch_scale = \"0.8us\"\n", "<t>", p));
  CHECK_THROWS(ModelParams::parse("[host]\nlaunch_scale = 0\n", "<t>", p));
}
