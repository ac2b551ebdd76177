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
int log2_up(int v) {
  int b = 0;
  while ((1 << b) < v) ++b;
  return b;
}
/// Bytes of part `i` when `bytes` are split over `n` channels as NCCL does (ncclP2pPartBounds: parts 4 KiB
/// aligned, the last ones possibly short or empty).
std::uint64_t part_size(std::uint64_t bytes, int n, int i) {
  if (bytes == 0) return 0;
  const std::uint64_t part = ((div_up(bytes, static_cast<std::uint64_t>(n)) + 4095) / 4096) * 4096;
  const std::uint64_t beg = std::min<std::uint64_t>(static_cast<std::uint64_t>(i) * part, bytes);
  const std::uint64_t end = std::min<std::uint64_t>(static_cast<std::uint64_t>(i + 1) * part, bytes);
  return end - beg;
}
/// The low `bits` bits of `v` in reverse order (NCCL's reverseBits).
int reverse_bits(int v, int bits) {
  int r = 0;
  for (int i = 0; i < bits; ++i) r |= ((v >> i) & 1) << (bits - 1 - i);
  return r;
}

/// The most peers each way the peer loss counts (p2p.peer_ramp): the measured all-to-alls have 2 and 3; more
/// (an 8-GPU machine's 7) are held at 3's loss rather than extrapolated.
constexpr int kPeerLossMaxPeers = 3;

/// Scratch of p2p_schedule and NcclModel::p2p_warps, one per thread: a run plans each kernel's group once,
/// and these arrays were most of what that cost.
struct P2pScratch {
  std::vector<int> node_order, node_index, member_start, member_fill, members;
  std::vector<std::pair<int, int>> sched;
  std::vector<int> send_round, recv_round, send_at, recv_at, send_list, recv_list, send_fill, recv_fill;
  std::vector<int> count, cur, slots;
  std::vector<char> remote;  ///< per channel: carries a part to or from another GPU
  std::vector<std::uint32_t> parts;
  // A channel's batches: up to 8 works of distinct rounds each (addWorkBatchToPlan).
  struct Batch {
    std::array<int, 8> rounds{};
    int nrounds = 0;
    int load = 0;  // directions to or from other GPUs
  };
  std::vector<Batch> batches;
  struct Work {
    int send = -1, recv = -1;  // op indices (a Self op is both)
    int nsend = 0, nrecv = 0;  // parts of each direction
    std::size_t slot = 0;      // its parts' batches start at slots[slot], max(nsend, nrecv) of them
  };
  std::vector<Work> works;
};

P2pScratch& p2p_scratch() {
  thread_local P2pScratch scratch;
  return scratch;
}

/// NCCL's p2p schedule (src/init.cc): round k's (send rank, receive rank) for `rank`, whose communicator rank
/// r lives on machine `rank_node[r]`. Machine deltas, and within them local deltas, run through (x^2 + x) / 2
/// modulo the next power of two, skipping values out of range; with unequal machines the ranks are taken
/// flat.
/// Fills `x.sched`.
void p2p_schedule_into(int rank, std::span<const int> rank_node, P2pScratch& x) {
  const int n = static_cast<int>(rank_node.size());
  // Machines in order of their first rank, and each machine's ranks in order (counting sort).
  x.node_order.clear();
  x.node_index.assign(static_cast<std::size_t>(n), 0);
  for (int r = 0; r < n; ++r) {
    auto it = std::find(x.node_order.begin(), x.node_order.end(), rank_node[r]);
    if (it == x.node_order.end()) {
      x.node_order.push_back(rank_node[r]);
      it = x.node_order.end() - 1;
    }
    x.node_index[static_cast<std::size_t>(r)] = static_cast<int>(it - x.node_order.begin());
  }
  int nnodes = static_cast<int>(x.node_order.size());
  x.member_start.assign(static_cast<std::size_t>(nnodes) + 1, 0);
  for (int r = 0; r < n; ++r) ++x.member_start[static_cast<std::size_t>(x.node_index[r]) + 1];
  for (int m = 0; m < nnodes; ++m) x.member_start[m + 1] += x.member_start[m];
  x.member_fill.assign(x.member_start.begin(), x.member_start.end() - 1);
  x.members.resize(static_cast<std::size_t>(n));
  int local_of_rank = 0;
  for (int r = 0; r < n; ++r) {
    const int nd = x.node_index[static_cast<std::size_t>(r)];
    if (r == rank) local_of_rank = x.member_fill[nd] - x.member_start[nd];
    x.members[static_cast<std::size_t>(x.member_fill[nd]++)] = r;
  }
  const auto size_of = [&](int nd) { return x.member_start[nd + 1] - x.member_start[nd]; };
  int nlocals = size_of(0);
  bool flat = false;
  for (int m = 0; m < nnodes; ++m) flat = flat || size_of(m) != nlocals;
  int node = x.node_index[static_cast<std::size_t>(rank)];
  int local = local_of_rank;
  if (flat) {
    nnodes = 1;
    node = 0;
    nlocals = n;
    local = rank;
  }
  const auto to_rank = [&](int nd, int lc) { return flat ? lc : x.members[x.member_start[nd] + lc]; };
  x.sched.clear();
  x.sched.reserve(static_cast<std::size_t>(n));
  const int nodes_pow2 = pow2_up(nnodes), locals_pow2 = pow2_up(nlocals);
  int node_round = 0, node_delta = 0;
  do {
    if (node_delta < nnodes) {
      const int send_node = (node + node_delta) % nnodes, recv_node = (node - node_delta + nnodes) % nnodes;
      int local_round = 0, local_delta = 0;
      do {
        if (local_delta < nlocals) {
          x.sched.emplace_back(to_rank(send_node, (local + local_delta) % nlocals),
                               to_rank(recv_node, (local - local_delta + nlocals) % nlocals));
        }
        ++local_round;
        local_delta = (local_delta + local_round) & (locals_pow2 - 1);
      } while (local_round != locals_pow2);
    }
    ++node_round;
    node_delta = (node_delta + node_round) & (nodes_pow2 - 1);
  } while (node_round != nodes_pow2);
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
    double min_edge = 0;  // bytes/s: the thinnest NVLink a pair of local ranks has (links x link rate)
    c.all_nvlink = !pairs.empty();
    c.nvswitch = c.all_nvlink;
    for (const PairInfo& pr : pairs) {
      if (!pr.same_node) {
        c.net_tcp = c.net_tcp || pr.tcp || env_.ib_disable;
        continue;
      }
      c.nvswitch = c.nvswitch && pr.nvswitch;
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
        const double edge = pr.nvlinks * (pr.nvlink_bandwidth > 0 ? pr.nvlink_bandwidth : 25e9);
        if (min_edge == 0 || edge < min_edge) min_edge = edge;
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
      const double ring_graph = std::floor(min_nvlinks * nccl_link / p_.ring_channel_bandwidth + 1e-9);
      c.nccl_intra_bandwidth = ring_graph * p_.ring_channel_bandwidth;
      c.ring_graph_channels = std::max(1, static_cast<int>(ring_graph));
      c.nccl_gpu_nvlink = min_nvlinks * nccl_link;
      c.gpu_nvlink_bandwidth = min_edge;
    } else {
      c.nvswitch = false;
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

  /// How addP2pToPlan splits one direction of `bytes`: its protocol, step size and channel count.
  struct Split {
    bool ll = false;
    std::uint64_t step = 0;
    int channels = 1;
  };
  Split split(std::uint64_t bytes, const CommInfo& comm, bool self = false) const {
    Split sp;
    const int max_ch = std::max(1, comm.p2p_channels_per_peer);
    int min_ch = max_ch;
    while (min_ch * comm.nranks > comm.p2p_channels && min_ch > 1) min_ch /= 2;
    // A send to oneself is a copy inside the kernel: never LL.
    sp.ll = !self && env_.proto_ll && bytes <= static_cast<std::uint64_t>(max_ch) * comm.ll_threshold;
    sp.step = sp.ll ? p_.ll_buffsize / static_cast<std::uint64_t>(p_.steps) : comm.p2p_chunksize;
    if (bytes > 0) {
      const bool multi = comm.nnodes > 1;
      const std::uint64_t min_part = std::max<std::uint64_t>(multi ? sp.step / 2 : sp.step / 8, 1);
      const std::uint64_t max_part = multi ? sp.step : sp.step * 32;
      int n = static_cast<int>(
          std::min<std::uint64_t>(static_cast<std::uint64_t>(min_ch), div_up(bytes, min_part)));
      std::uint64_t part = std::max(min_part, div_up(bytes, static_cast<std::uint64_t>(n)));
      while (part > max_part && n <= max_ch / 2) {
        n *= 2;
        part = div_up(bytes, static_cast<std::uint64_t>(n));
      }
      sp.channels = n;
    }
    return sp;
  }

  /// A channel part's rate relative to one that both sends and receives (10 + 9 warps): the direction's
  /// warps e (the receive side's counted as 10/9 of a send warp) over 10, to the power that makes a lone
  /// direction's 19 warps p2p.solo_speedup times as fast above 10, and a two-work channel's 5 + 4
  /// p2p.split_rate times as fast below. Below 4.44 warps, if p2p.split3_rate is set, a second power law
  /// from there makes a three-work channel's 3 + 2 (2.22) split3_rate times as fast: the rate is not one
  /// power of the warps (measured on H200: 0.686 at 4.44 warps, 0.39-0.40 at 2.22, where one law says 0.50).
  double warp_factor(PartWarps w) const {
    const double e = std::min(static_cast<double>(w.send), static_cast<double>(w.recv) * 10.0 / 9.0);
    if (e <= 0 || e == 10.0) return 1.0;
    constexpr double kTwoWorks = 40.0 / 9.0;  // 5 + 4 warps: min(5, 4 x 10/9)
    if (e < kTwoWorks && p_.split3_rate > 0) {
      const double g3 =
          std::log(std::max(p_.split3_rate, 1e-9) / std::max(p_.split_rate, 1e-9)) / std::log(0.5);
      return p_.split_rate * std::pow(e / kTwoWorks, g3);
    }
    const double gamma = e > 10.0 ? std::log(std::max(p_.solo_speedup, 1e-9)) / std::log(1.9)
                                  : std::log(std::max(p_.split_rate, 1e-9)) / std::log(4.0 / 9.0);
    return std::pow(e / 10.0, gamma);
  }

  using TransferModel::plan;
  TransferPlan plan(std::uint64_t bytes, const PairInfo& pair, const CommInfo& comm,
                    std::span<const PartWarps> warps) const override {
    TransferPlan t;
    t.transport = transport(pair);
    const Split sp = split(bytes, comm);
    const bool ll = sp.ll;
    t.protocol = ll ? Protocol::Ll : Protocol::Simple;
    const ProtocolParams& proto = ll ? p_.ll : p_.simple;
    const std::uint64_t step = sp.step;
    const std::uint64_t chunk_data = ll ? step / 2 : step;
    t.chunk = std::max<std::uint64_t>(chunk_data, 1);

    // Channels for this operation (addP2pToPlan).
    const int n = sp.channels;
    t.channels = n;
    const Picoseconds channel_cost = n * proto.channel_latency;
    if (warps.empty() || (warps.size() != 1 && warps.size() != static_cast<std::size_t>(n))) {
      throw Error("p2p plan: " + std::to_string(warps.size()) + " warp entries for " + std::to_string(n) +
                  " channel parts");
    }
    const auto factor_of = [&](int part) {
      const PartWarps& w = warps[warps.size() == 1 ? 0 : part];
      double f = warp_factor(w);
      // The channel's budget, shared by every direction to or from another GPU on its batch at either end.
      const int load = std::max(w.send_load, w.recv_load);
      if (p_.channel_budget > 0 && load > 0) f = std::min(f, 2 * p_.channel_budget / load);
      return f;
    };
    // The part whose warps are most plentiful sets the plan's rate; the others carry their own.
    double best = 0;
    for (int i = 0; i < static_cast<int>(warps.size()); ++i) best = std::max(best, factor_of(i));

    // Per-channel data rate, and the transport's own costs.
    double rate = proto.channel_bandwidth * best;
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

    for (int i = 0; i < n; ++i) {
      ChannelPart cp;
      cp.bytes = part_size(bytes, n, i);
      cp.wire_bytes = static_cast<double>(cp.bytes) * wire;
      cp.steps = cp.bytes == 0 ? (i == 0 ? 1 : 0) : static_cast<int>(div_up(cp.bytes, t.chunk));
      const double factor = factor_of(i);
      if (factor != best && t.channel_rate > 0) cp.rate = t.channel_rate * factor / best;
      if (!ll && cp.steps > 0) {
        const double first = static_cast<double>(std::min<std::uint64_t>(t.chunk, cp.bytes));
        // The receiver's copy speeds up like the sender's with the warps it has.
        const double fill_rate = proto.fill_bandwidth * factor;
        const double fill = proto.fill_bandwidth > 0 ? first / fill_rate : 0.0;
        // Over the network the proxy keeps `steps` sends in flight, so per-step costs overlap the transfer
        // (published NDR figures, 46-48 GB/s per NIC, leave no room for them); between GPUs they add up.
        const Picoseconds per_step = t.transport == Transport::Net ? 0 : proto.step_overhead;
        cp.overhead = cp.steps * per_step + static_cast<Picoseconds>(std::llround(fill * 1e12));
      }
      const PartWarps& pw = warps[warps.size() == 1 ? 0 : static_cast<std::size_t>(i)];
      const double port = pair.nvlinks * pair.nvlink_bandwidth * p_.nvlink_efficiency;  // bytes/s
      // Peers both ways, over NVLink only (measured on NVSwitch ports), each end scaled by its own port's
      // pressure rho^2 (channels to and from other GPUs of its machine over the port: none on an idle port),
      // the busier end counting. One peer or more: a start-up loss that fades (p2p.port_ramp); several: a
      // larger one per extra peer and a lasting one (p2p.peer_ramp, peer_rate_loss), k held at
      // kPeerLossMaxPeers (no more peers measured).
      const double part_rate = cp.rate > 0 ? cp.rate : t.channel_rate;  // wire bytes/s
      if (t.transport == Transport::P2p && port > 0 && part_rate > 0 && cp.wire_bytes > 0 &&
          (p_.port_ramp > 0 || p_.peer_ramp > 0 || p_.peer_rate_loss > 0)) {
        const double nominal = cp.wire_bytes / part_rate;  // s
        // rho^2 times a weight of the end's peers (0 for an end that does not both send and receive).
        const auto pressure = [&](auto weight) {
          const auto end = [&](int peers, int channels) {
            const double k = weight(peers);
            if (k <= 0) return 0.0;
            const double rho = std::min(1.0, channels * proto.channel_bandwidth / port);
            return k * rho * rho;
          };
          return std::max(end(pw.send_peers, pw.send_channels), end(pw.recv_peers, pw.recv_channels));
        };
        // What a start-up loss of `fraction` fading over `time` (picoseconds) costs this part, in seconds,
        // times `w` (multiplied in first: the products as session 25's and 26's code rounded them).
        const auto ramp = [&](double w, double fraction, Picoseconds time) {
          const double tau = static_cast<double>(time) / 1e12;
          return tau > 0 ? w * fraction * tau * -std::expm1(-nominal / tau) : 0.0;
        };
        if (const double w = pressure([](int peers) { return peers >= 1 ? 1.0 : 0.0; });
            p_.port_ramp > 0 && w > 0) {
          cp.overhead +=
              static_cast<Picoseconds>(std::llround(ramp(w, p_.port_ramp, p_.port_ramp_time) * 1e12));
        }
        if (const double w = pressure([](int peers) { return std::min(peers, kPeerLossMaxPeers) - 1.0; });
            (p_.peer_ramp > 0 || p_.peer_rate_loss > 0) && w > 0) {
          cp.overhead += static_cast<Picoseconds>(std::llround(
              w * (ramp(1.0, p_.peer_ramp, p_.peer_ramp_time) + p_.peer_rate_loss * nominal) * 1e12));
        }
      }
      if (cp.steps > 0) t.parts.push_back(cp);
    }
    return t;
  }

  GroupSlots p2p_warps(const CommInfo& comm, int rank, std::span<const int> rank_node,
                       std::span<const GroupOp> ops) const override {
    GroupSlots out(ops.size());
    const int n = comm.nranks;
    if (n < 1 || rank < 0 || rank >= n || rank_node.size() != static_cast<std::size_t>(n)) return out;
    for (const GroupOp& op : ops) {
      if (op.peer < 0 || op.peer >= n) return out;
    }
    P2pScratch& x = p2p_scratch();
    p2p_schedule_into(rank, rank_node, x);
    const std::vector<std::pair<int, int>>& sched = x.sched;
    std::vector<int>& send_round = x.send_round;
    std::vector<int>& recv_round = x.recv_round;
    send_round.assign(static_cast<std::size_t>(n), -1);
    recv_round.assign(static_cast<std::size_t>(n), -1);
    for (int r = 0; r < n; ++r) {
      send_round[sched[r].first] = r;
      recv_round[sched[r].second] = r;
    }
    // Per round, the sends and receives in issue order (a counting sort by round): pass j of the planner
    // takes the j-th of each. Round r's sends are send_list[send_at[r] .. send_at[r + 1]).
    std::vector<int>& send_at = x.send_at;
    std::vector<int>& recv_at = x.recv_at;
    send_at.assign(static_cast<std::size_t>(n) + 1, 0);
    recv_at.assign(static_cast<std::size_t>(n) + 1, 0);
    for (const GroupOp& op : ops) {
      if (op.dir == GroupOp::Dir::Recv) {
        ++recv_at[recv_round[op.peer] + 1];
      } else {
        ++send_at[send_round[op.peer] + 1];
      }
    }
    for (int r = 0; r < n; ++r) {
      send_at[r + 1] += send_at[r];
      recv_at[r + 1] += recv_at[r];
    }
    std::vector<int>& send_list = x.send_list;
    std::vector<int>& recv_list = x.recv_list;
    send_list.resize(static_cast<std::size_t>(send_at[n]));
    recv_list.resize(static_cast<std::size_t>(recv_at[n]));
    {
      std::vector<int>& send_fill = x.send_fill;
      std::vector<int>& recv_fill = x.recv_fill;
      send_fill.assign(send_at.begin(), send_at.end() - 1);
      recv_fill.assign(recv_at.begin(), recv_at.end() - 1);
      for (std::size_t i = 0; i < ops.size(); ++i) {
        const GroupOp& op = ops[i];
        if (op.dir == GroupOp::Dir::Recv) {
          recv_list[recv_fill[recv_round[op.peer]]++] = static_cast<int>(i);
        } else {
          send_list[send_fill[send_round[op.peer]]++] = static_cast<int>(i);
        }
      }
    }
    const int nch = std::max(1, comm.p2p_channels);
    const int bits = log2_up(nch);
    int max_local = 1;
    {
      std::vector<int>& count = x.count;
      count.clear();
      for (int node : rank_node) {
        if (node >= static_cast<int>(count.size())) count.resize(node + 1, 0);
        max_local = std::max(max_local, ++count[node]);
      }
    }
    using Batch = P2pScratch::Batch;
    using Work = P2pScratch::Work;
    // Every channel's batches in one array; a channel appends only to its newest (cur[ch]).
    std::vector<Batch>& batches = x.batches;
    batches.clear();
    std::vector<int>& cur = x.cur;
    cur.assign(static_cast<std::size_t>(nch), -1);
    x.remote.assign(static_cast<std::size_t>(nch), 0);
    // The peer loss (p2p.peer_ramp) is an NVLink port's: only peers of the rank's own machine count.
    const auto same_machine = [&](int peer) { return rank_node[peer] == rank_node[rank]; };
    std::vector<Work>& works = x.works;
    works.clear();
    works.reserve(ops.size());
    std::vector<int>& slots = x.slots;  // per part of each work, its batch in `batches`
    slots.clear();
    for (int pass = 0;; ++pass) {
      bool any = false;
      for (int r = 0; r < n; ++r) {
        Work w;
        if (pass < send_at[r + 1] - send_at[r]) w.send = send_list[send_at[r] + pass];
        if (pass < recv_at[r + 1] - recv_at[r]) w.recv = recv_list[recv_at[r] + pass];
        if (w.send >= 0 && ops[w.send].dir == GroupOp::Dir::Self) w.recv = w.send;
        if (w.send < 0 && w.recv < 0) continue;
        any = true;
        const bool self = w.send >= 0 && ops[w.send].dir == GroupOp::Dir::Self;
        if (w.send >= 0) w.nsend = split(ops[w.send].bytes, comm, self).channels;
        if (w.recv >= 0) w.nrecv = split(ops[w.recv].bytes, comm, self).channels;
        int base = r;
        if (comm.nnodes > 1) {
          base = (r / max_local) * static_cast<int>(div_up(max_local, 8)) + (r % max_local) / 8;
        }
        base = reverse_bits(base, bits);
        w.slot = slots.size();
        for (int part = 0; part < std::max(w.nsend, w.nrecv); ++part) {
          const int ch = (base + part) & (nch - 1);
          int& c = cur[static_cast<std::size_t>(ch)];
          if (c < 0 || batches[c].nrounds == 8 ||
              std::find(batches[c].rounds.begin(), batches[c].rounds.begin() + batches[c].nrounds, r) !=
                  batches[c].rounds.begin() + batches[c].nrounds) {
            c = static_cast<int>(batches.size());
            batches.emplace_back();
          }
          Batch& b = batches[c];
          b.rounds[static_cast<std::size_t>(b.nrounds++)] = r;
          if (!self) {
            b.load += (part < w.nsend ? 1 : 0) + (part < w.nrecv ? 1 : 0);
            if ((part < w.nsend && same_machine(ops[w.send].peer)) ||
                (part < w.nrecv && same_machine(ops[w.recv].peer))) {
              x.remote[static_cast<std::size_t>(ch)] = 1;
            }
          }
          slots.push_back(c);
        }
        works.push_back(w);
      }
      if (!any) break;
    }
    // GPUs of its machine this end both sends to and receives from: the fewer of its distinct destinations
    // and sources. Each peer has one send round and one receive round, and round 0 is the rank itself: the
    // rounds after it with sends, and with receives. Both counts are the same for every part of the group.
    int dests = 0, sources = 0;
    for (int r = 1; r < n; ++r) {
      dests += send_at[r + 1] > send_at[r] && same_machine(sched[r].first) ? 1 : 0;
      sources += recv_at[r + 1] > recv_at[r] && same_machine(sched[r].second) ? 1 : 0;
    }
    const auto kp = static_cast<std::uint8_t>(std::min({dests, sources, 255}));
    const auto rc = static_cast<std::uint8_t>(
        std::min<std::ptrdiff_t>(std::count(x.remote.begin(), x.remote.end(), 1), 255));
    std::vector<std::uint32_t>& parts = x.parts;
    parts.assign(ops.size(), 0);
    for (const Work& w : works) {
      const bool self = w.send >= 0 && w.send == w.recv;
      if (w.send >= 0) parts[static_cast<std::size_t>(w.send)] = static_cast<std::uint32_t>(w.nsend);
      if (w.recv >= 0 && !self) parts[static_cast<std::size_t>(w.recv)] = static_cast<std::uint32_t>(w.nrecv);
    }
    out.layout(parts);
    // The kernel's split (src/device/sendrecv.h): 20 warps over the batch's works; a work's send gets one
    // warp more than its receive; a lone direction (or a copy) gets both shares.
    for (const Work& w : works) {
      const bool self = w.send >= 0 && w.send == w.recv;
      const int nparts = std::max(w.nsend, w.nrecv);
      for (int part = 0; part < nparts; ++part) {
        const Batch& batch = batches[slots[w.slot + static_cast<std::size_t>(part)]];
        const int k = batch.nrounds;
        const int per_work = std::min(32, 20 / k);
        const int recv_w = per_work <= 4 ? per_work / 2 : (per_work - 1) / 2;
        const int send_w = per_work <= 4 ? recv_w : recv_w + 1;
        const bool has_send = part < w.nsend;
        const bool has_recv = part < w.nrecv;
        const int lone = send_w + recv_w;
        const auto load = static_cast<std::uint8_t>(std::min(batch.load, 255));
        const auto p = static_cast<std::size_t>(part);
        if (self) {
          out.part(static_cast<std::size_t>(w.send), p) = {static_cast<std::uint8_t>(lone), 0};
          continue;
        }
        if (has_send) {
          out.part(static_cast<std::size_t>(w.send), p) = {
              static_cast<std::uint8_t>(has_recv ? send_w : lone), load, kp, rc};
        }
        if (has_recv) {
          out.part(static_cast<std::size_t>(w.recv), p) = {
              static_cast<std::uint8_t>(has_send ? recv_w : lone), load, kp, rc};
        }
      }
    }
    return out;
  }

  Picoseconds self_copy_time(std::uint64_t bytes, const CommInfo& comm,
                             std::span<const std::uint8_t> warps) const override {
    const Split sp = split(bytes, comm, true);
    const int n = sp.channels;
    if (bytes == 0 || p_.self_copy_bandwidth <= 0) return p_.simple.base_latency;
    double worst = 0;
    for (int i = 0; i < n; ++i) {
      const std::uint8_t w =
          warps.empty() ? 19 : warps[warps.size() == 1 ? 0 : std::min<std::size_t>(i, warps.size() - 1)];
      const double rate = p_.self_copy_bandwidth * std::max<int>(w, 1) / 19.0;
      worst = std::max(worst, static_cast<double>(part_size(bytes, n, i)) / rate);
    }
    return p_.simple.base_latency + static_cast<Picoseconds>(std::llround(worst * 1e12));
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
    return scaled(p_.launch_base + gpus * p_.launch_per_gpu + ops * p_.launch_per_op +
                  colls * p_.launch_per_coll);
  }
  Picoseconds compute_launch_time() const override { return scaled(p_.launch_compute); }
  /// A host cost at this start's host speed (host.launch_scale; 1 leaves any cost below 2^53 ps, days,
  /// exact).
  Picoseconds scaled(Picoseconds t) const {
    return static_cast<Picoseconds>(std::llround(static_cast<double>(t) * p_.launch_scale));
  }
  Picoseconds timing_event_time() const override { return p_.timing_event; }
  Picoseconds framework_call_time() const override { return p_.torch_call; }
  Picoseconds kernel_launch_latency() const override { return p_.kernel_launch_latency; }
  Picoseconds kernel_gap() const override { return p_.kernel_gap; }
  Picoseconds graph_kernel_gap() const override { return p_.graph_gap; }
  Picoseconds graph_join_time() const override { return p_.graph_join; }
  double shm_bandwidth() const override { return p_.shm_bandwidth; }
  double shm_host_memory_bandwidth() const override { return p_.shm_host_memory_bandwidth; }

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
  using TransferModel::plan;
  TransferPlan plan(std::uint64_t bytes, const PairInfo& pair, const CommInfo&,
                    std::span<const PartWarps>) const override {
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
