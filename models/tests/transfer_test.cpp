// Model tests for the NCCL send/recv model: transport rule, channel counts and steps, LL/Simple switch point.
#include <doctest/doctest.h>

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
