// The NCCL-faithful send/recv model (transport, channels, protocol, chunking; NCCL 2.28) and an ideal model.
#include "commsim/models/transfer.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "collective.hpp"
#include "commsim/core/error.hpp"

namespace commsim::models {
namespace {

std::uint64_t div_up(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}
int pow2_up(int v) {
  int p = 1;
  while (p < v) p <<= 1;
  return p;
}

/// NCCL's behaviour, as read from src/enqueue.cc (addP2pToPlan, scheduleP2pTasksToPlan), src/init.cc and
/// src/graph/paths.cc (ncclTopoComputeP2pChannels, ncclTopoGetNchannels, ncclTopoCheckP2p).
class NcclModel final : public TransferModel {
 public:
  NcclModel(const ModelParams& p, const NcclEnv& env) : p_(p), env_(env) {}

  CommInfo comm_info(int nranks, int nnodes, std::span<const PairInfo> pairs) const override {
    CommInfo c;
    c.nranks = nranks;
    c.nnodes = nnodes;
    int min_nvlinks = 1 << 30;
    double link_bw = 0;
    double min_route = 0;
    c.all_nvlink = !pairs.empty();
    for (const PairInfo& pr : pairs) {
      if (!pr.same_node) {
        c.net_tcp = c.net_tcp || pr.tcp || env_.ib_disable;
        continue;
      }
      // Where P2P cannot be used, NCCL diverts the pair's path through the CPU (src/graph/paths.cc), so its
      // graph, and the tuner with it, sees the host-memory path's rate instead of the direct route's.
      const double route = transport(pr) == Transport::P2p ? pr.route_bandwidth
                                                           : std::min(pr.route_bandwidth, p_.shm_bandwidth);
      if (route > 0 && (min_route == 0 || route < min_route)) min_route = route;
      if (pr.path != PathType::Nvl || transport(pr) != Transport::P2p) {
        c.all_nvlink = false;
      } else {
        min_nvlinks = std::min(min_nvlinks, pr.nvlinks);
        link_bw = pr.nvlink_bandwidth;
      }
    }
    // Collective channels: NCCL's ring search finds nvlinks x (NCCL link rate) / (search speed) channels on
    // an NVLink machine and duplicates them; elsewhere it settles on one ring pair.
    int coll = p_.coll_channels_no_nvlink;
    if (c.all_nvlink && min_nvlinks < (1 << 30)) {
      const double nccl_link = p_.nccl_nvlink_bandwidth_sm90 * (link_bw > 0 ? link_bw / 25e9 : 1.0);
      coll = 2 * std::max(1, static_cast<int>(
                                 std::floor(min_nvlinks * nccl_link / p_.ring_channel_bandwidth + 1e-9)));
    }
    if (env_.min_nchannels) coll = std::max(coll, *env_.min_nchannels);
    if (env_.max_nchannels) coll = std::min(coll, *env_.max_nchannels);
    coll = std::clamp(coll, 1, p_.max_channels);
    c.coll_channels = coll;
    // The bus bandwidth NCCL's ring graph reaches: whole search-speed channels over NVLink, else the slowest
    // intra-node route (PCIe or the CPU link).
    if (c.all_nvlink && min_nvlinks < (1 << 30)) {
      const double nccl_link = p_.nccl_nvlink_bandwidth_sm90 * (link_bw > 0 ? link_bw / 25e9 : 1.0);
      c.nccl_intra_bandwidth =
          std::floor(min_nvlinks * nccl_link / p_.ring_channel_bandwidth + 1e-9) * p_.ring_channel_bandwidth;
    } else {
      c.nccl_intra_bandwidth = min_route > 0 ? min_route : 12e9;
      c.intra_pcie = true;
    }
    c.p2p_channels = std::min(pow2_up(coll), p_.max_channels);
    // Channels per peer: the minimum over every peer (src/graph/paths.cc ncclTopoGetNchannels).
    int min_channels = c.p2p_channels;
    for (const PairInfo& pr : pairs) {
      int n = 2;
      if (!pr.same_node) {
        n = env_.nchannels_per_net_peer.value_or(0);
        if (n == 0) {
          int max_ch = 2;
          while (max_ch * nranks > c.p2p_channels * 4 && max_ch > 1) max_ch /= 2;
          n = std::max(1, max_ch);
        }
      } else if (transport(pr) == Transport::P2p && pr.path == PathType::Nvl) {
        n = 2 * std::max(1, pr.nvlinks);
      }
      min_channels = std::min(min_channels, n);
    }
    c.p2p_channels_per_peer = std::min(pow2_up(min_channels), c.p2p_channels);
    // Step size (src/init.cc): network, all-NVLink or PCIe chunk, capped by the buffer.
    std::uint64_t chunk = nnodes > 1     ? env_.p2p_net_chunksize.value_or(p_.p2p_net_chunksize)
                          : c.all_nvlink ? env_.p2p_nvl_chunksize.value_or(p_.p2p_nvl_chunksize)
                                         : env_.p2p_pci_chunksize.value_or(p_.p2p_pci_chunksize);
    const std::uint64_t buff = env_.buffsize.value_or(p_.buffsize);
    chunk = std::min<std::uint64_t>(chunk, buff / static_cast<std::uint64_t>(p_.steps));
    c.p2p_chunksize = std::max<std::uint64_t>(chunk, 1);
    c.ll_threshold = env_.p2p_ll_threshold.value_or(p_.p2p_ll_threshold);
    return c;
  }

  Transport transport(const PairInfo& pair) const override {
    if (!pair.same_node) return Transport::Net;
    const PathType level = env_.p2p_disable ? PathType::Loc : env_.p2p_level.value_or(PathType::Pxb);
    if (static_cast<int>(pair.path) <= static_cast<int>(level)) return Transport::P2p;
    return env_.shm_disable ? Transport::Net : Transport::Shm;
  }

  TransferPlan plan(std::uint64_t bytes, const PairInfo& pair, const CommInfo& comm,
                    bool shared_channel) const override {
    TransferPlan t;
    t.transport = transport(pair);
    const int max_ch = std::max(1, comm.p2p_channels_per_peer);
    int min_ch = max_ch;
    while (min_ch * comm.nranks > comm.p2p_channels && min_ch > 1) min_ch /= 2;

    const bool ll = env_.proto_ll && bytes <= static_cast<std::uint64_t>(max_ch) * comm.ll_threshold;
    t.protocol = ll ? Protocol::Ll : Protocol::Simple;
    const ProtocolParams& proto = ll ? p_.ll : p_.simple;
    const std::uint64_t step =
        ll ? p_.ll_buffsize / static_cast<std::uint64_t>(p_.steps) : comm.p2p_chunksize;
    const std::uint64_t chunk_data = ll ? step / 2 : step;
    t.chunk = std::max<std::uint64_t>(chunk_data, 1);

    // Channels for this operation (addP2pToPlan).
    int n = 1;
    if (bytes > 0) {
      const bool multi = comm.nnodes > 1;
      const std::uint64_t min_part = std::max<std::uint64_t>(multi ? step / 2 : step / 8, 1);
      const std::uint64_t max_part = multi ? step : step * 32;
      n = static_cast<int>(
          std::min<std::uint64_t>(static_cast<std::uint64_t>(min_ch), div_up(bytes, min_part)));
      std::uint64_t part = std::max(min_part, div_up(bytes, static_cast<std::uint64_t>(n)));
      while (part > max_part && n <= max_ch / 2) {
        n *= 2;
        part = div_up(bytes, static_cast<std::uint64_t>(n));
      }
    }
    t.channels = n;
    const Picoseconds channel_cost = n * proto.channel_latency;

    // Per-channel data rate, and the transport's own costs.
    double rate = proto.channel_bandwidth * (shared_channel ? 1.0 : p_.solo_speedup);
    t.base_latency = proto.base_latency + channel_cost;
    if (t.transport == Transport::Shm) {
      rate = std::min(rate, p_.shm_channel_bandwidth);
      t.base_latency += p_.shm_base_latency;
    } else if (t.transport == Transport::Net) {
      // Simple: the kernel copies into a staging buffer in local memory and the NIC reads it, so a network
      // channel runs at the proxy's rate, not at the rate of an SM writing across NVLink (2 channels fill a
      // 400G NIC, NVIDIA/nccl-tests#290: 46-48 GB/s per NDR NIC). LL keeps its own, lower rate (flag
      // polling).
      rate = ll ? std::min(rate, p_.net_channel_bandwidth) : p_.net_channel_bandwidth;
      t.base_latency += p_.net_base_latency + (pair.tcp || env_.ib_disable ? p_.net_tcp_latency : 0);
    }
    t.base_latency += pair.path_latency;
    // The 8-slot window: at most `steps` chunks in flight per round trip.
    const double rtt_s = static_cast<double>(2 * pair.path_latency + proto.step_overhead) / 1e12;
    if (rtt_s > 0) rate = std::min(rate, p_.steps * static_cast<double>(t.chunk) / rtt_s);
    const double wire = ll ? 1.0 / proto.wire_efficiency : 1.0;
    t.channel_rate = rate * wire;

    // Parts as NCCL splits them (ncclP2pPartBounds: 4 KiB aligned).
    const std::uint64_t part_bytes =
        bytes == 0 ? 0 : ((div_up(bytes, static_cast<std::uint64_t>(n)) + 4095) / 4096) * 4096;
    for (int i = 0; i < n; ++i) {
      ChannelPart cp;
      const std::uint64_t beg = std::min<std::uint64_t>(static_cast<std::uint64_t>(i) * part_bytes, bytes);
      const std::uint64_t end =
          std::min<std::uint64_t>(static_cast<std::uint64_t>(i + 1) * part_bytes, bytes);
      cp.bytes = end - beg;
      cp.wire_bytes = static_cast<double>(cp.bytes) * wire;
      cp.steps = cp.bytes == 0 ? (i == 0 ? 1 : 0) : static_cast<int>(div_up(cp.bytes, t.chunk));
      if (!ll && cp.steps > 0) {
        const double first = static_cast<double>(std::min<std::uint64_t>(t.chunk, cp.bytes));
        // The receiver's copy speeds up like the sender's when the channel carries one direction only.
        const double fill_rate = proto.fill_bandwidth * (shared_channel ? 1.0 : p_.solo_speedup);
        const double fill = proto.fill_bandwidth > 0 ? first / fill_rate : 0.0;
        // Over the network the proxy keeps `steps` sends in flight, so per-step costs overlap the transfer
        // (published NDR figures, 46-48 GB/s per NIC, leave no room for them); between GPUs they add up.
        const Picoseconds per_step = t.transport == Transport::Net ? 0 : proto.step_overhead;
        cp.overhead = cp.steps * per_step + static_cast<Picoseconds>(std::llround(fill * 1e12));
      }
      if (cp.steps > 0) t.parts.push_back(cp);
    }
    return t;
  }

  CollectivePlan collective(CollOp op, std::uint64_t bytes, int root, const CommInfo& comm,
                            std::span<const int> rank_node, std::span<const int> rank_nic) const override {
    return nccl_collective_plan(p_, env_, op, bytes, root, comm, rank_node, rank_nic);
  }

  TransferPlan copy_plan(std::uint64_t bytes, const PairInfo& pair) const override {
    TransferPlan t;
    t.transport = Transport::P2p;
    t.channels = 1;
    t.chunk = std::max<std::uint64_t>(bytes, 1);
    t.base_latency = p_.copy_latency + pair.path_latency;
    // The flow network's NVLink capacity is NCCL's usable share; copy engines reach a different share.
    const double scale = pair.path == PathType::Nvl ? p_.nvlink_efficiency / p_.copy_nvlink_efficiency : 1.0;
    t.channel_rate = p_.copy_bandwidth * scale;
    t.parts.push_back({bytes, static_cast<double>(bytes) * scale, 1, 0});
    return t;
  }

  double link_efficiency(LinkKind link, bool tcp) const override {
    switch (link) {
      case LinkKind::NvLink:
        return p_.nvlink_efficiency;
      case LinkKind::Pcie:
        return p_.pcie_efficiency;
      case LinkKind::Network:
        return tcp || env_.ib_disable ? p_.net_tcp_efficiency : p_.net_nic_efficiency;
      case LinkKind::HostLink:
      case LinkKind::Smp:
        return 1.0;
    }
    return 1.0;
  }
  double link_saturation(LinkKind link) const override {
    return link == LinkKind::NvLink ? p_.nvlink_saturation
           : link == LinkKind::Pcie ? p_.pcie_saturation
                                    : 0.0;
  }
  Picoseconds host_launch_time(int gpus, int ops, int colls) const override {
    return p_.launch_base + gpus * p_.launch_per_gpu + ops * p_.launch_per_op + colls * p_.launch_per_coll;
  }
  Picoseconds compute_launch_time() const override { return p_.launch_compute; }
  Picoseconds timing_event_time() const override { return p_.timing_event; }
  Picoseconds framework_call_time() const override { return p_.torch_call; }
  Picoseconds kernel_launch_latency() const override { return p_.kernel_launch_latency; }
  Picoseconds kernel_gap() const override { return p_.kernel_gap; }
  Picoseconds graph_kernel_gap() const override { return p_.graph_gap; }
  Picoseconds graph_join_time() const override { return p_.graph_join; }
  double shm_bandwidth() const override { return p_.shm_bandwidth; }

 private:
  ModelParams p_;
  NcclEnv env_;
};

/// The bound most back-of-the-envelope estimates use: one stream of bytes at the route's peak, no overheads.
class IdealModel final : public TransferModel {
 public:
  IdealModel(const ModelParams& p, const NcclEnv& env) : nccl_(p, env) {}
  CommInfo comm_info(int nranks, int nnodes, std::span<const PairInfo> pairs) const override {
    return nccl_.comm_info(nranks, nnodes, pairs);
  }
  Transport transport(const PairInfo& pair) const override { return nccl_.transport(pair); }
  TransferPlan plan(std::uint64_t bytes, const PairInfo& pair, const CommInfo&, bool) const override {
    TransferPlan t;
    t.transport = transport(pair);
    t.protocol = Protocol::Simple;
    t.channels = 1;
    t.chunk = std::max<std::uint64_t>(bytes, 1);
    t.base_latency = pair.path_latency;
    t.channel_rate = 0;
    t.parts.push_back({bytes, static_cast<double>(bytes), 1, 0});
    return t;
  }
  CollectivePlan collective(CollOp op, std::uint64_t bytes, int root, const CommInfo& comm,
                            std::span<const int> rank_node, std::span<const int> rank_nic) const override {
    return ideal_collective_plan(op, bytes, root, comm, rank_node, rank_nic);
  }
  TransferPlan copy_plan(std::uint64_t bytes, const PairInfo& pair) const override {
    return plan(bytes, pair, CommInfo{}, false);
  }
  double link_efficiency(LinkKind, bool) const override { return 1.0; }
  double link_saturation(LinkKind) const override { return 0.0; }
  Picoseconds host_launch_time(int, int, int) const override { return 0; }
  Picoseconds compute_launch_time() const override { return 0; }
  Picoseconds framework_call_time() const override { return 0; }
  Picoseconds kernel_launch_latency() const override { return 0; }
  Picoseconds kernel_gap() const override { return 0; }
  double shm_bandwidth() const override { return 0; }

 private:
  NcclModel nccl_;
};

template <typename M>
std::unique_ptr<TransferModel> make(const ModelParams& p, const NcclEnv& e) {
  return std::make_unique<M>(p, e);
}

const std::array<TransferModelInfo, 2> kModels{{
    {"nccl",
     "NCCL 2.28: send/recv (transport rule, channels per peer and op, LL/Simple, chunked pipeline) and "
     "Ring/Tree collectives chosen by NCCL's tuner; launch and protocol overheads",
     &make<NcclModel>},
    {"ideal", "lower bound: every transfer one stream at the route's peak bandwidth, no overheads",
     &make<IdealModel>},
}};

}  // namespace

const char* transport_name(Transport t) {
  return kTransportNames.name(t);
}

const char* protocol_name(Protocol p) {
  return kProtocolNames.name(p);
}

const char* coll_op_name(CollOp op) {
  return kCollOpNames.name(op);
}

const char* algorithm_name(Algorithm a) {
  return kAlgorithmNames.name(a);
}

std::span<const TransferModelInfo> transfer_models() {
  return kModels;
}

std::unique_ptr<TransferModel> make_transfer_model(std::string_view name, const ModelParams& params,
                                                   const NcclEnv& env) {
  std::string valid;
  for (const auto& m : kModels) {
    if (m.name == name) return m.make(params, env);
    valid += (valid.empty() ? "" : ", ") + std::string(m.name);
  }
  throw UsageError("unknown model '" + std::string(name) + "'; valid models: " + valid);
}

}  // namespace commsim::models
