// NCCL's collective tuner (algorithm and protocol choice, channels per size) and ring/tree data flows.
//
// The tuner constants are NCCL 2.28's for Hopper (src/graph/tuning.cc, read to understand; this is our own
// code). NCCL ranks every (algorithm, protocol) by latency + bytes / bandwidth and runs the fastest; commsim
// reproduces that choice, then costs the run with its own fitted per-protocol parameters ([collective] in a
// parameter set) and lets the flow network decide how the ring or tree edges share the links.
#include "collective.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "commsim/core/error.hpp"

namespace commsim::models {
namespace {

constexpr int kLl = 0, kLl128 = 1, kSimple = 2;
constexpr int kRing = 1, kTree = 0;  // NCCL's table order: Tree, Ring

// NCCL tuner constants (us, GB/s), Hopper column where NCCL distinguishes GPU generations.
constexpr double kBaseLat[2][3] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}};  // [Tree, Ring][LL, LL128, Simple]
constexpr double kHwLatNvlink[2][3] = {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}};
constexpr double kHwLatPci[2][3] = {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}};
constexpr double kHwLatNet[2][3] = {{5.0, 8.5, 14.0}, {2.7, 4.0, 14.0}};
constexpr double kLlMaxBwOneNode = 141.0;              // Hopper, one node
constexpr double kLlMaxBwMultiNode[2] = {39.0, 20.4};  // x86 CPUs, 2 nodes / more
constexpr double kPerChMaxRingLl128Bw = 36.7;
constexpr double kPerChMaxTreeBw[3] = {38.7, 41.4, 36.0};  // 1, 2, more nodes
constexpr double kPerChMaxTreeLl128Bw[3] = {36.7, 36.7, 29.0};
constexpr double kPciBw = 12.0;
// Tree all-reduce correction by log2(bytes / 64), NCCL's treeCorrectionFactor.
constexpr double kTreeCorrection[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};
// Threads per block and per-thread work thresholds (src/include/device.h, src/include/comm.h).
constexpr int kLlMaxThreads = 512, kLl128MaxThreads = 640, kSimpleMaxThreads = 512;
constexpr int kLlThreadThreshold = 8, kLl128ThreadThreshold = 8, kSimpleThreadThreshold = 64;

// NCCL's intra-node search speeds, GB/s a channel (src/graph/search.cc: speedArrayIntra before Hopper,
// sm90SpeedArrayIntra, sm100SpeedArrayIntra).
constexpr double kSpeedIntra[] = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
constexpr double kSm90SpeedIntra[] = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
constexpr double kSm100SpeedIntra[] = {90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18};

/// NCCL's tree graph on one NVSwitch machine: each channel's chain and the graph's per-channel speed.
struct TreeGraph {
  /// Positions 0..n-1 in the node's rank order (NCCL orders GPUs by bus id; on one switch every order is
  /// alike), root first; empty: not found.
  std::vector<std::vector<int>> chains;
  double speed_gbps = 0;        ///< bwIntra, GB/s a channel
  bool simple_pattern = false;  ///< found only with the simpler tree pattern (NCCL's tuner then takes 0.85)
};

/// NCCL's tree graph search (src/graph/search.cc, ncclTopoCompute with NCCL_TOPO_PATTERN_BALANCED_TREE) on
/// one machine whose n GPUs meet through an NVSwitch, each with `gpu_gbps` of NVLink to it in NCCL's model,
/// compute capability `sm` (x 10). The tree graph must have exactly the ring graph's `channels`. From the
/// fastest speed the GPUs' links allow, NCCL searches chains with the same order on every channel, then
/// chains that differ per channel, then (Hopper and later) both again with the simpler tree pattern, which
/// only goes on to the next GPU, and lowers the speed until one search completes every channel; then it tries
/// higher speeds, below twice the one found, with the settings that found it (pass 2). A search is a
/// depth-first walk with NCCL's step budgets: a channel first replays the previous one, a chain goes on only
/// to a GPU's NVSwitch neighbours (next, then previous), and a hop takes the speed off the sender's link to
/// the switch and the switch's link to the receiver. Where no speed completes, NCCL falls back to one channel
/// in PCI order at 0.1 GB/s; this returns no chains instead, and the caller keeps its chain in ring order.
///
/// What it reproduces (NCCL_DEBUG_SUBSYS=GRAPH on 4x H200, validation/data/h200x4/tree): 4 GPUs get the same
/// chain 0-1-2-3 on all 12 channels at 30 GB/s; 3 GPUs get 12 channels at 40 GB/s: 6 of 0-1-2, 3 of 1-2-0, 3
/// of 2-0-1.
class TreeSearch {
 public:
  TreeSearch(int n, double gpu_gbps, int channels, int sm)
      : n_(n), cap_(gpu_gbps), channels_(channels), sm_(sm) {}

  TreeGraph run() {
    std::span<const double> speeds = sm_ >= 100  ? std::span<const double>(kSm100SpeedIntra)
                                     : sm_ >= 90 ? std::span<const double>(kSm90SpeedIntra)
                                                 : std::span<const double>(kSpeedIntra);
    // Speeds above what a GPU's links carry, or whose channels exceed the GPUs' bandwidth (a tree need not
    // come back to its start: NCCL scales the total by n / (n - 1)), are skipped; never the slowest.
    const double total = cap_ * n_ / std::max(1, n_ - 1);
    std::size_t at = 0;
    while (at + 1 < speeds.size() && (speeds[at] > cap_ || speeds[at] * channels_ > total + 1e-9)) ++at;
    struct Pass {
      bool same, balanced;
    };
    std::vector<Pass> passes{{true, true}, {false, true}};
    if (sm_ >= 90) passes.insert(passes.end(), {{true, false}, {false, false}});
    for (; at < speeds.size(); ++at) {
      for (const Pass& pass : passes) {
        if (!search(speeds[at], pass.same, pass.balanced)) continue;
        TreeGraph found{best_, speeds[at], !pass.balanced};
        // Pass 2: a higher intra speed, below twice the one found, with the same settings.
        for (std::size_t up = at; up > 0 && speeds[up - 1] < 2 * speeds[at]; --up) {
          if (!search(speeds[up - 1], pass.same, pass.balanced)) break;
          found = {best_, speeds[up - 1], !pass.balanced};
        }
        return found;
      }
    }
    return {};
  }

 private:
  bool search(double speed, bool same, bool balanced) {
    speed_ = speed;
    same_ = same;
    balanced_ = balanced;
    out_.assign(static_cast<std::size_t>(n_), cap_);
    in_.assign(static_cast<std::size_t>(n_), cap_);
    used_.assign(static_cast<std::size_t>(n_), 0);
    intra_.assign(static_cast<std::size_t>(n_ * channels_), 0);
    nch_ = 0;
    time_ = same ? 1 << 8 : 1 << 14;  // NCCL_SEARCH_TIMEOUT_SAMECHANNELS, NCCL_SEARCH_TIMEOUT(_TREE)
    best_.clear();
    rec();
    return !best_.empty();
  }

  /// NCCL rounds link budgets to 1/1000 after every change (SUB_ROUND).
  static double rounded(double v) { return std::round(v * 1000) / 1000; }

  bool follow(int a, int b) {
    if (out_[a] < speed_) return false;
    if (in_[b] < speed_) return false;
    out_[a] = rounded(out_[a] - speed_);
    in_[b] = rounded(in_[b] - speed_);
    return true;
  }
  void unfollow(int a, int b) {
    out_[a] = rounded(out_[a] + speed_);
    in_[b] = rounded(in_[b] + speed_);
  }

  enum class Order { Pci, Replay, Search };

  void try_gpu(int step, Order order, int from, int g) {
    if (from >= 0 && !follow(from, g)) return;
    const std::uint64_t flag = std::uint64_t{1} << nch_;
    used_[g] ^= flag;
    rec_gpu(g, step, order);
    used_[g] ^= flag;
    if (from >= 0) unfollow(from, g);
  }

  void rec_gpu(int g, int step, Order order) {
    if (time_ <= 0) return;
    --time_;
    if (step == n_) {
      ++nch_;
      if (nch_ == channels_) {
        best_.clear();
        for (int c = 0; c < nch_; ++c) {
          best_.emplace_back(intra_.begin() + c * n_, intra_.begin() + (c + 1) * n_);
        }
        time_ = -1;  // every channel found: NCCL stops searching
      } else {
        rec();
      }
      --nch_;
      return;
    }
    intra_[static_cast<std::size_t>(nch_ * n_ + step)] = g;
    if (step < n_ - 1) {
      int next[2];
      int count = 0;
      if (order == Order::Pci) {
        next[count++] = step + 1;
      } else if (order == Order::Replay) {
        next[count++] = intra_[static_cast<std::size_t>((nch_ - 1) * n_ + step + 1)];
      } else {
        // NVSwitch neighbours only (ncclTopoSearchNextGpuSort): the next GPU, then the previous one
        // for a balanced tree; the next one only for the simpler tree.
        const std::uint64_t flag = std::uint64_t{1} << nch_;
        const int nxt = (g + 1) % n_, prev = (g - 1 + n_) % n_;
        if (!(used_[nxt] & flag)) next[count++] = nxt;
        if (balanced_ && prev != nxt && !(used_[prev] & flag)) next[count++] = prev;
      }
      for (int i = 0; i < count; ++i) try_gpu(step + 1, order, g, next[i]);
    } else {
      rec_gpu(g, n_, order);
    }
  }

  void rec() {
    if (nch_ == 0) {
      try_gpu(0, Order::Pci, -1, 0);
    } else {
      try_gpu(0, Order::Replay, -1, intra_[static_cast<std::size_t>((nch_ - 1) * n_)]);
    }
    if (!same_ || nch_ == 0) {
      for (int g = 0; g < n_; ++g) try_gpu(0, Order::Search, -1, g);
    }
  }

  int n_;
  double cap_;
  int channels_;
  int sm_;
  double speed_ = 0;
  bool same_ = true, balanced_ = true;
  std::vector<double> out_, in_;
  std::vector<std::uint64_t> used_;
  std::vector<int> intra_;
  int nch_ = 0;
  int time_ = 0;
  std::vector<std::vector<int>> best_;
};

/// The tree graph on one NVSwitch machine, searched once per (GPUs, link budget, channels, sm) and thread.
const TreeGraph& nvswitch_tree_graph(int n, double gpu_gbps, int channels, int sm) {
  thread_local std::map<std::tuple<int, double, int, int>, TreeGraph> cache;
  const auto key = std::make_tuple(n, gpu_gbps, channels, sm);
  auto it = cache.find(key);
  if (it == cache.end()) {
    TreeGraph g;
    // The search's channel masks are 64 bits wide (NCCL's MAXCHANNELS).
    if (n >= 2 && channels >= 1 && channels <= 64) g = TreeSearch(n, gpu_gbps, channels, sm).run();
    it = cache.emplace(key, std::move(g)).first;
  }
  return it->second;
}

/// The tree graph of a communicator on one NVSwitch machine, or nullptr elsewhere (a chain in ring order).
const TreeGraph* tree_graph_of(const CommInfo& c) {
  if (c.nnodes != 1 || !c.nvswitch || c.ring_graph_channels <= 0 || c.sm <= 0) return nullptr;
  const TreeGraph& g = nvswitch_tree_graph(c.nranks, c.nccl_gpu_nvlink / 1e9, c.ring_graph_channels, c.sm);
  return g.chains.empty() ? nullptr : &g;
}

int log2i(std::uint64_t v) {
  int l = -1;
  while (v) {
    v >>= 1;
    ++l;
  }
  return l;
}

struct Layout {
  std::vector<int> ring;                  ///< communicator ranks in ring order (grouped by node)
  std::vector<std::vector<int>> by_node;  ///< ranks per node, in rank order; node order of first appearance
  /// Per node, its ranks with a NIC of their own (rank_nic >= 0), in rank order; empty when every rank has
  /// one.
  std::vector<std::vector<int>> near_nic;
  /// Per node, the NIC of each of near_nic's ranks.
  std::vector<std::vector<int>> near_nic_id;
  /// NCCL can close a ring through PXN: every pair inside a machine is NVLink P2P.
  bool pxn = false;
};

Layout layout(std::span<const int> rank_node, std::span<const int> rank_nic, bool pxn) {
  Layout l;
  l.pxn = pxn;
  std::map<int, int> node_index;
  for (std::size_t r = 0; r < rank_node.size(); ++r) {
    auto [it, added] = node_index.emplace(rank_node[r], static_cast<int>(l.by_node.size()));
    if (added) {
      l.by_node.emplace_back();
      l.near_nic.emplace_back();
      l.near_nic_id.emplace_back();
    }
    l.by_node[it->second].push_back(static_cast<int>(r));
    if (r < rank_nic.size() && rank_nic[r] >= 0) {
      l.near_nic[it->second].push_back(static_cast<int>(r));
      l.near_nic_id[it->second].push_back(rank_nic[r]);
    }
  }
  for (const auto& ranks : l.by_node) l.ring.insert(l.ring.end(), ranks.begin(), ranks.end());
  return l;
}

int nsteps_of(CollOp op, int n) {
  return op == CollOp::AllReduce                                  ? 2 * (n - 1)
         : op == CollOp::AllGather || op == CollOp::ReduceScatter ? n - 1
                                                                  : n;
}

struct Choice {
  int algo = kRing;
  int proto = kSimple;
  double time_us = 0;
};

/// NCCL's tuner (ncclTopoTuneModel + ncclTopoGetAlgoTime + topoGetAlgoInfo), restricted to Ring and Tree.
Choice tune(const NcclEnv& env, CollOp op, std::uint64_t bytes, const CommInfo& c, int ppn) {
  const int n = c.nranks, nodes = c.nnodes;
  const int nsteps = nsteps_of(op, n);
  const int idx2 = nodes <= 2 ? nodes - 1 : 2;
  const double ll_max = nodes == 1 ? kLlMaxBwOneNode : kLlMaxBwMultiNode[nodes == 2 ? 0 : 1];
  const int nch = std::max(1, c.coll_channels);
  // The per-channel caps count the graph's channels (graphs[a]->nChannels, before the communicator doubles
  // them): on 2x H200 NCCL's table gives Tree Simple 232.2 GB/s = 12 x 38.7 x 0.5. Known inside one NVLink
  // machine (the ring graph's; the tree graph has as many); across machines the communicator's stand in.
  const int graph_ch = nodes == 1 && c.ring_graph_channels > 0 ? c.ring_graph_channels : nch;
  const double inter = c.node_net_bandwidth > 0 ? c.node_net_bandwidth : c.nccl_intra_bandwidth;
  const double bus = (nodes <= 2 ? c.nccl_intra_bandwidth : std::min(c.nccl_intra_bandwidth, inter)) / 1e9;
  const double(*intra_hw)[3] = c.intra_pcie ? kHwLatPci : kHwLatNvlink;
  const bool proto_on[3] = {env.proto_ll, env.proto_ll128 && !c.intra_pcie, env.proto_simple};
  const TreeGraph* tree = env.algo_tree && op == CollOp::AllReduce ? tree_graph_of(c) : nullptr;
  Choice best;
  best.time_us = -1;
  for (int a : {kTree, kRing}) {
    if (a == kTree && (!env.algo_tree || op != CollOp::AllReduce)) continue;
    if (a == kRing && !env.algo_ring) continue;
    for (int p : {kLl, kLl128, kSimple}) {
      if (!proto_on[p]) continue;
      double bw = bus;
      if (a == kRing && p == kLl) bw = std::min(ll_max, bw * .5);
      if (a == kRing && p == kLl128) bw = std::min(bw * .92, graph_ch * kPerChMaxRingLl128Bw);
      // The tree's bus bandwidth is its own graph's (channels x speed), which on an NVSwitch machine can
      // differ from the ring's: 3 GPUs get tree channels at 40 GB/s, rings at 30.
      if (a == kTree && tree != nullptr) bw = c.ring_graph_channels * tree->speed_gbps;
      if (a == kTree) bw = std::min(bw * .92, graph_ch * kPerChMaxTreeBw[idx2]);
      if (a == kTree && p == kLl) bw = std::min(bw / 3.8, ll_max);
      if (a == kTree && p == kLl128)
        bw = std::min(bw * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), graph_ch * kPerChMaxTreeLl128Bw[idx2]);
      if (a == kTree && tree != nullptr && tree->simple_pattern) bw *= .85;  // maxTreePattern TREE
      bw *= a == kRing ? static_cast<double>(n) / nsteps : .5;
      double lat = kBaseLat[a][p];
      const double intra_lat = intra_hw[a][p];
      double inter_lat = ppn == 1 ? kHwLatNet[kTree][p] : kHwLatNet[a][p];
      if (a == kRing) {
        const double hw = nodes == 1 ? intra_hw[a][p] : kHwLatNet[a][p];
        if (op == CollOp::Broadcast || op == CollOp::Reduce) {
          lat += hw;
        } else {
          const double net_overhead = nodes > 1 ? (p == kSimple ? 3.0 : 1.0) : 0.0;
          const int inter_steps = nodes == 1 ? 0 : op == CollOp::AllReduce ? 2 * (nodes - 1) : nodes - 1;
          lat += (nsteps - inter_steps) * std::max(intra_lat, net_overhead) + inter_steps * inter_lat;
        }
      } else {
        lat += 2 * ((n / nodes - 1) * intra_lat + log2i(static_cast<std::uint64_t>(nodes)) * inter_lat);
      }
      const int log_size = log2i(bytes >> 6);
      if (a == kTree && log_size >= 0 && log_size < 23) bw *= kTreeCorrection[p][log_size];
      if (a == kRing && p == kSimple && nodes > 1 && op == CollOp::AllReduce &&
          bytes / (static_cast<std::uint64_t>(nch) * n) >= 64)
        lat *= 1.4;
      if (bw <= 0) continue;
      const double t = lat + static_cast<double>(bytes) / (1000.0 * bw);
      if (best.time_us < 0 || t < best.time_us) best = {a, p, t};
    }
  }
  if (best.time_us < 0) {
    throw UsageError(std::string("NCCL_ALGO/NCCL_PROTO leave no algorithm and protocol for ") +
                     coll_op_name(op) + " (Tree runs only all_reduce; LL128 needs NVLink inside the node)");
  }
  return best;
}

/// Channels NCCL uses for this size (topoGetAlgoInfo: fewer channels until each thread has enough work).
int channels_for(int algo, int proto, std::uint64_t bytes, const CommInfo& c) {
  int nc = std::max(1, c.coll_channels);
  const bool slow = c.nccl_intra_bandwidth / 1e9 <= kPciBw;
  const int nt = proto == kLl      ? kLlMaxThreads
                 : proto == kLl128 ? kLl128MaxThreads
                                   : (slow && algo == kRing ? 256 : kSimpleMaxThreads);
  std::uint64_t threshold = proto == kLl      ? kLlThreadThreshold
                            : proto == kLl128 ? kLl128ThreadThreshold
                                              : kSimpleThreadThreshold;
  if (algo == kRing && proto == kLl) threshold *= static_cast<std::uint64_t>(c.nranks);
  while (bytes < static_cast<std::uint64_t>(nc) * nt * threshold && nc >= 2) --nc;
  return nc;
}

/// Distinct NICs among a node's near ranks, in order of first appearance.
std::vector<int> nics_of(const std::vector<int>& near_id) {
  std::vector<int> nics;
  for (int id : near_id) {
    if (std::find(nics.begin(), nics.end(), id) == nics.end()) nics.push_back(id);
  }
  return nics;
}

/// One ring in communicator ranks: `ring[i]` sends to `ring[i + 1]` (the last to the first). `relay[i]` >= 0:
/// that edge leaves its machine through PXN, over NVLink to rank relay[i], whose NIC sends it on.
struct RingOrder {
  std::vector<int> ring;
  std::vector<int> relay;
};

/// Ring (or tree head) `r` of several: each node's ranks rotated by r, so that parallel rings leave and
/// enter every node through different GPUs and hence different NICs, as NCCL's channels do.
///
/// Where only some of a node's GPUs have a NIC of their own (a what-if with fewer NICs than GPUs), NCCL's
/// ring search (src/graph/search.cc) enters and leaves the node only through those, and first looks for rings
/// that leave through the NIC they entered by (NCCL_CROSS_NIC=2 tries crossNic 0 before 2): ring r takes the
/// (r mod M)-th of the node's M NICs and enters at a GPU on it; it leaves through a second GPU on the same
/// NIC where there is one, else (NVLink everywhere) through PXN: its last GPU writes over NVLink to the
/// entering GPU, whose NIC sends it on (src/graph/paths.cc: GPU-to-NIC PXN paths). Only without NVLink and a
/// lone GPU per NIC does it leave through the previous NIC's GPU (a rail crossing, NCCL's crossNic fallback).
RingOrder rotated_ring(const Layout& l, int r) {
  RingOrder o;
  const auto u = static_cast<std::size_t>(r);
  for (std::size_t n = 0; n < l.by_node.size(); ++n) {
    const auto& ranks = l.by_node[n];
    const auto& near = l.near_nic[n];
    const std::size_t k = ranks.size();
    const std::size_t m = near.size();
    if (m == 0 || m == k || (m == 1 && !l.pxn)) {  // every GPU (or none, or one) has its NIC: plain rotation
      for (std::size_t i = 0; i < k; ++i) {
        o.ring.push_back(ranks[(i + u) % k]);
        o.relay.push_back(-1);
      }
      continue;
    }
    const std::vector<int> nics = nics_of(l.near_nic_id[n]);
    const std::size_t mm = nics.size();
    const std::size_t which = u % mm;
    std::vector<int> on;  // near ranks on this ring's NIC
    for (std::size_t i = 0; i < m; ++i) {
      if (l.near_nic_id[n][i] == nics[which]) on.push_back(near[i]);
    }
    const std::size_t j = (u / mm) % on.size();
    const int in = on[j];
    int out = -1, relay = -1;
    if (on.size() >= 2) {
      out = on[(j + on.size() - 1) % on.size()];
    } else if (l.pxn) {
      relay = in;
    } else {
      const int prev = nics[(which + mm - 1) % mm];
      for (std::size_t i = 0; i < m && out < 0; ++i) {
        if (l.near_nic_id[n][i] == prev) out = near[i];
      }
    }
    const std::size_t start =
        static_cast<std::size_t>(std::find(ranks.begin(), ranks.end(), in) - ranks.begin());
    o.ring.push_back(in);
    o.relay.push_back(-1);
    for (std::size_t i = 1; i < k; ++i) {
      const int x = ranks[(start + i) % k];
      if (x == out) continue;
      o.ring.push_back(x);
      o.relay.push_back(-1);
    }
    if (out >= 0) {
      o.ring.push_back(out);
      o.relay.push_back(-1);
    }
    o.relay.back() = relay;  // the edge out of this node
  }
  return o;
}

/// Rings across machines: one per rank of the smallest machine; where only some GPUs have a NIC, a whole
/// number of rings per NIC (NCCL's search gives each NIC the same channels), as close to that as possible.
int ring_count(const Layout& l) {
  const int nodes = static_cast<int>(l.by_node.size());
  if (nodes < 2) return 1;
  std::size_t ppn = l.by_node.front().size();
  for (const auto& ranks : l.by_node) ppn = std::min(ppn, ranks.size());
  std::size_t per = 0;
  for (std::size_t n = 0; n < l.by_node.size(); ++n) {
    const std::size_t m = l.near_nic[n].size();
    if (m == 0 || m == l.by_node[n].size() || (m == 1 && !l.pxn)) continue;
    per = std::max(per, nics_of(l.near_nic_id[n]).size());
  }
  if (per == 0) return static_cast<int>(ppn);
  return static_cast<int>(per * std::max<std::size_t>(1, ppn / per));
}

/// Appends the flow of edge `i` of ring `o`: one flow, or two through a PXN relay.
void push_edge(std::vector<CollFlow>& flows, const RingOrder& o, std::size_t i, double bytes) {
  const std::size_t n = o.ring.size();
  const int src = o.ring[i % n], dst = o.ring[(i + 1) % n], relay = o.relay[i % n];
  if (relay >= 0 && relay != src) {
    flows.push_back({src, relay, bytes});
    flows.push_back({relay, dst, bytes});
  } else {
    flows.push_back({src, dst, bytes});
  }
}

/// Data bytes each edge carries: ring edges for ring algorithms, chains and double binary trees for Tree.
/// Across machines the data is spread over parallel rings (trees): ring_count().
/// One chain of a tree graph and the share of the channels that run it.
struct WeightedChain {
  const std::vector<int>* order = nullptr;  ///< positions in the node's rank order, root first
  double share = 0;
};

/// Adds `bytes` (carried by `share` of the channels) to the flow from `src` to `dst`, or appends one.
void add_flow(std::vector<CollFlow>& flows, int src, int dst, double bytes, double share) {
  for (CollFlow& f : flows) {
    if (f.src == src && f.dst == dst) {
      f.wire_bytes += bytes;
      f.channel_share += share;
      return;
    }
  }
  flows.push_back({src, dst, bytes, share});
}

std::vector<CollFlow> data_flows(int algo, CollOp op, std::uint64_t bytes, int root, const Layout& l,
                                 std::span<const WeightedChain> chains = {}) {
  std::vector<CollFlow> flows;
  const int n = static_cast<int>(l.ring.size());
  if (n < 2) return flows;
  const int nodes = static_cast<int>(l.by_node.size());
  const int rings = ring_count(l);
  const double s = static_cast<double>(bytes) / rings;
  for (int r = 0; r < rings; ++r) {
    const RingOrder o = rotated_ring(l, r);
    const std::vector<int>& ring = o.ring;
    if (algo == kRing) {
      if (op == CollOp::Broadcast || op == CollOp::Reduce) {
        // A pipelined chain along the ring, from the root (broadcast) or ending at it (reduce).
        const int at = static_cast<int>(std::find(ring.begin(), ring.end(), root) - ring.begin());
        for (int i = 0; i < n - 1; ++i) {
          push_edge(flows, o, static_cast<std::size_t>(op == CollOp::Broadcast ? at + i : at + 1 + i), s);
        }
        continue;
      }
      const double per_edge =
          op == CollOp::AllReduce ? 2.0 * (n - 1) / n * s : static_cast<double>(n - 1) / n * s;
      for (int i = 0; i < n; ++i) push_edge(flows, o, static_cast<std::size_t>(i), per_edge);
      continue;
    }
    // Tree all-reduce: reduce up, broadcast down. Inside a node a chain from its head rank; between nodes two
    // binary trees over the heads, each carrying half of the data (NCCL's double binary tree). On one
    // NVSwitch machine, the chains NCCL's tree search gives its channels (tree_graph_of); a pair on only some
    // channels' chains gets only their share of the per-channel rate cap.
    if (nodes == 1 && !chains.empty()) {
      for (const WeightedChain& w : chains) {
        const std::vector<int>& chain = *w.order;
        for (std::size_t i = 0; i + 1 < chain.size(); ++i) {
          const int up = ring[static_cast<std::size_t>(chain[i])];
          const int down = ring[static_cast<std::size_t>(chain[i + 1])];
          add_flow(flows, down, up, s * w.share, w.share);
          add_flow(flows, up, down, s * w.share, w.share);
        }
      }
      continue;
    }
    std::vector<int> heads;
    std::size_t at = 0;
    for (const auto& ranks : l.by_node) {
      for (std::size_t i = 0; i + 1 < ranks.size(); ++i) {
        flows.push_back({ring[at + i + 1], ring[at + i], s});
        flows.push_back({ring[at + i], ring[at + i + 1], s});
      }
      heads.push_back(ring[at]);
      at += ranks.size();
    }
    for (int t = 0; t < (nodes > 1 ? 2 : 0); ++t) {
      for (int i = 1; i < nodes; ++i) {
        const int child = t == 0 ? i : nodes - 1 - i;
        const int parent = t == 0 ? (i - 1) / 2 : nodes - 1 - (i - 1) / 2;
        flows.push_back({heads[child], heads[parent], s / 2});
        flows.push_back({heads[parent], heads[child], s / 2});
      }
    }
  }
  return flows;
}

/// How much of a Simple ring's last slice shows after its data has streamed (0 to 1). The last slice drains
/// at a channel's own rate because channels do not finish in lockstep where they share the links: some fall
/// behind and finish with the links to themselves. Where the channels bind instead (a channel limit), every
/// rank runs its loop's steps back to back at its threads' rate, each step's data is there when its thread
/// reaches it (every rank starts with its own), and nothing is left to drain. Between the two, the weight
/// follows how hard the links hold the channels back: the engine's smooth NVLink saturation
/// (saturated_rate: an offered load D gets D / (1 + (D/C)^k)^(1/k)), its shortfall as a share of
/// the shortfall where D reaches the capacity C, capped at 1; with a hard NVLink limit (k = 0) that is 0
/// below C and 1 from C. `flow_rate` is the ring flow's cap in wire bytes/s (0: none), the load it offers
/// the NVLink a ring edge crosses (on one machine a ring edge carries only its own flow). Other traffic on
/// the same links (an exchange beside the collective) is not counted: under a channel limit the weight then
/// stays low where the engine's links do bind. Off NVLink, across machines or without a cap the links are
/// taken to bind (1). Measured on H200s (validation/data/h200x4 and h200x2, coverage): all_reduce on 2 GPUs
/// under NCCL_MAX_NCHANNELS=1 and 4 grows linearly from 2 and 8 MiB with about 10-19 us at zero bytes (the
/// medians' lines between sizes), where a drained 1 MiB slice would add 44 us.
double ring_drain_weight(const ModelParams& p, const CommInfo& comm, double flow_rate) {
  if (comm.nnodes > 1 || comm.gpu_nvlink_bandwidth <= 0 || !(flow_rate > 0)) return 1.0;
  const double capacity = comm.gpu_nvlink_bandwidth * p.nvlink_efficiency;
  const double k = p.nvlink_saturation;
  if (k <= 0) return flow_rate >= capacity ? 1.0 : 0.0;
  // The share of the offered load the links do not deliver.
  const auto shortfall = [&](double load) { return 1 - saturated_rate(load, capacity, k) / load; };
  return std::min(1.0, shortfall(flow_rate) / shortfall(capacity));
}

}  // namespace

CollectivePlan nccl_collective_plan(const ModelParams& p, const NcclEnv& env, CollOp op, std::uint64_t bytes,
                                    int root, const CommInfo& comm, std::span<const int> rank_node,
                                    std::span<const int> rank_nic) {
  CollectivePlan plan;
  const Layout l = layout(rank_node, rank_nic, comm.all_nvlink);
  const int n = comm.nranks;
  if (n < 2) return plan;
  const int ppn = std::max(1, n / std::max(1, comm.nnodes));
  const Choice c = tune(env, op, bytes, comm, ppn);
  plan.algorithm = c.algo == kRing ? Algorithm::Ring : Algorithm::Tree;
  plan.protocol = c.proto == kLl ? Protocol::Ll : c.proto == kLl128 ? Protocol::Ll128 : Protocol::Simple;
  plan.nccl_estimate_us = c.time_us;
  plan.channels = channels_for(c.algo, c.proto, bytes, comm);
  const CollectiveParams& k = p.coll;
  const int nodes = std::max(1, comm.nnodes);
  int intra_steps = 0, inter_steps = 0;
  if (c.algo == kRing) {
    const int hops = op == CollOp::AllReduce ? 2 * (n - 1) : n - 1;
    inter_steps = nodes == 1 ? 0 : op == CollOp::AllReduce ? 2 * (nodes - 1) : nodes - 1;
    intra_steps = hops - inter_steps;
    // A ring loop ends with a receive-only step (the final directRecv of all_gather and all_reduce,
    // recvReduceCopy of reduce_scatter: src/device/*.h runRing) that waits for the last data like a sending
    // step does: one more step of latency. Chains (broadcast, reduce) have none.
    if (op != CollOp::Broadcast && op != CollOp::Reduce) ++intra_steps;
  } else {
    intra_steps = 2 * (ppn - 1);
    inter_steps = 2 * log2i(static_cast<std::uint64_t>(nodes));
  }
  plan.latency = k.base_latency[c.proto] + intra_steps * k.hop_latency[c.proto] +
                 inter_steps * (k.net_hop_latency[c.proto] + (comm.net_tcp ? p.net_tcp_latency : 0));
  const double wire = c.proto == kLl ? 1.0 / p.ll.wire_efficiency : c.proto == kLl128 ? 128.0 / 120.0 : 1.0;
  double eff = k.efficiency[static_cast<int>(op)] * (c.algo == kRing ? 1.0 : p.coll_tree_efficiency);
  // A ring loop of all_reduce, all_gather or reduce_scatter: its sending steps and one receive-only step.
  const bool ring_loop = c.algo == kRing && op != CollOp::Broadcast && op != CollOp::Reduce;
  const double ks = n - 1.0;
  const double sending = op == CollOp::AllReduce ? 2 * ks : ks;
  if (ring_loop) eff *= sending / (sending + p.coll_ring_recv_step);  // links idle in the receive-only step
  plan.flow_rate = plan.channels * k.channel_bandwidth[c.proto] * wire;
  if (ring_loop && c.proto != kLl128) {
    // Where the channels bind, a Simple ring loop takes its steps' thread time, counted in forwarding steps
    // (k.channel_bandwidth is one forwarding step's rate; src/device/all_reduce.h, all_gather.h and
    // reduce_scatter.h runRing): all_gather copySend, n - 2 recvCopySend and a receive-only recv;
    // all_reduce send, n - 2 recvReduceSend, recvReduceCopySend, n - 2 recvCopySend and recv; reduce_scatter
    // send, n - 2 recvReduceSend and a receive-only recvReduceCopy. A reducing step costs
    // p.coll_reduce_step and a receive-only one p.coll_channel_recv_step. The channel's data rate is its
    // sending steps over that sum; the wire bytes carry the link-level efficiency (eff), so the cap, in wire
    // bytes, is raised by as much. On H200s under NCCL_MAX_NCHANNELS (validation/data/h200x4 and h200x2,
    // coverage) a channel's bus bandwidth is 25 GB/s for all_reduce and 20 for all_gather on 4 GPUs, 21 and
    // 15 on 2. No run limits reduce_scatter's channels: its receive-only recvReduceCopy, counted as the
    // others' receive-only step, is unmeasured.
    // LL has no direct receive: every step, the last one too, reads lines out of the LL buffer and polls
    // their flags, and a reducing step costs what a forwarding one does (measured: LL all_reduce and
    // all_gather on 2 and 4 H200s fit one step cost within 3%); its receive-only step costs
    // p.coll_ll_recv_step. LL's channels always bind on NVLink (8 GB/s a channel), so its rate is this cap.
    const bool ll = c.proto == kLl;
    const double reduce = ll ? 1.0 : p.coll_reduce_step;
    const double recv = ll ? p.coll_ll_recv_step : p.coll_channel_recv_step;
    const double steps = op == CollOp::AllGather   ? ks + recv
                         : op == CollOp::AllReduce ? ks + ks * reduce + recv
                                                   : 1 + (ks - 1) * reduce + recv;
    plan.flow_rate *= sending / steps / eff;
  }
  if (c.algo == kTree) {
    // A tree channel runs 640 threads split in two groups (src/device/all_reduce.h runTreeSplit;
    // src/enqueue.cc gives Tree NCCL_MAX_NTHREADS): every rank but the root reduces up with one group and
    // broadcasts down with the other, Simple 384 / 256 threads, LL and LL128 448 / 192 (70% / 30%). A group's
    // rate is its threads over the memory streams each element costs it, against a ring channel's
    // (k.channel_bandwidth: 512 threads for Simple and LL, 640 for LL128, three streams: receive, local
    // input, send). The slowest group sets the channel's rate: a middle rank's broadcast group (receive,
    // write out, send on: three streams); without a middle rank, LL and LL128's leaf broadcast group
    // (receive, write out: two), while Simple's leaf only receives what its parent writes into its buffer
    // (direct), so its root's single group (receive, local input, write out, send: four streams over 640
    // threads) is the slowest. Measured on 4x H200 (validation/data/h200x4/tree): a leaf's broadcast
    // runs 1.47-1.53x a middle rank's under LL and LL128. Threads, not workers: a Simple group that sends
    // keeps a warp for synchronisation (prims_simple.h), which would make a middle rank 224 / 512 of a ring
    // channel; 4 channels of NCCL_ALGO=Tree measure 13.3 GB/s a channel, 0.56 of h200.toml's ring channel,
    // nearer the threads' 0.5 than the workers' 0.44.
    const bool middle = n > 2;
    const double ring_threads = c.proto == kLl128 ? 640.0 : 512.0;
    const double group = c.proto == kSimple ? (middle ? 256.0 : 640.0) : 192.0;
    const double streams = c.proto == kSimple ? (middle ? 3.0 : 4.0) : (middle ? 3.0 : 2.0);
    // p.coll_tree_efficiency (NCCL's tuner: a tree's bus bandwidth is 0.92 of the ring's) discounts how well
    // tree traffic uses the links; it inflates the wire bytes below, so the cap, which is threads, not links,
    // is raised by as much to stay where the threads put it.
    plan.flow_rate *= group / ring_threads * 3.0 / streams / p.coll_tree_efficiency;
  }
  std::vector<WeightedChain> chains;
  if (const TreeGraph* tree = c.algo == kTree ? tree_graph_of(comm) : nullptr) {
    const auto& found = tree->chains;
    // Channels past the graph's are its duplicates (ncclTopoDupChannels, then the connect step), so channel
    // ch runs chain ch mod graph channels; a channel limit keeps the first ones.
    for (int ch = 0; ch < plan.channels; ++ch) {
      const std::vector<int>* order = &found[static_cast<std::size_t>(ch) % found.size()];
      auto it = std::find_if(chains.begin(), chains.end(),
                             [&](const WeightedChain& w) { return *w.order == *order; });
      if (it == chains.end()) it = chains.insert(chains.end(), {order, 0.0});
      it->share += 1;  // channels for now; their share below
    }
    for (WeightedChain& w : chains) w.share /= plan.channels;
  }
  plan.flows = data_flows(c.algo, op, bytes, root, l, chains);
  for (CollFlow& f : plan.flows) f.wire_bytes *= wire / eff;
  // Ring Simple moves each channel's share in chunks of 4 steps, 2 slices each (src/enqueue.cc chunk and
  // slice steps): the last slice out of the pipeline adds one slice time after the data has streamed. It is
  // what makes ring all-reduce/all-gather/reduce-scatter approach their peak rate slowly between 4 MiB and
  // 1 GiB. Chains (broadcast, reduce) use one-step chunks. The last slice moves at a channel's own rate, not
  // its share of the links: channels do not finish in lockstep, so the last ones drain with the links to
  // themselves (on shared host memory, 4 SHM channels would otherwise drain a 1 MiB slice at 8 GB/s, ~130 us,
  // where the measured times extrapolate to ~30 us; held out, session 13, models/README.md). Since session 35
  // it drains only as far as the links hold the channels back (ring_drain_weight): under a channel limit
  // nothing is left to drain.
  // A tree moves each channel's share in chunks of one Simple step (src/enqueue.cc calcCollChunking: chunk
  // and slice steps are 1 outside Ring), and a receiver forwards a step only once all of it has arrived. A
  // chunk crosses the chain's links one after another, up to the root and down again, so the last one leaves
  // the pipeline hops - 1 chunk times after the data has streamed. A hop moves a chunk at the channel's share
  // of the bus bandwidth NCCL's ring graph reaches (every channel fills at once; 360 GB/s over 24 channels on
  // an H200), or at the channel's own rate where that is lower. LL and LL128 forward line by line: no fill.
  if (c.proto == kSimple && c.algo == kTree) {
    const double step = static_cast<double>(env.buffsize.value_or(p.buffsize)) / p.steps;
    const double chunk = std::min(step, static_cast<double>(bytes) / plan.channels);
    const double own = k.channel_bandwidth[c.proto];
    const double intra_rate =
        comm.nccl_intra_bandwidth > 0 ? std::min(own, comm.nccl_intra_bandwidth / plan.channels) : own;
    const double inter_rate =
        comm.node_net_bandwidth > 0 ? std::min(own, comm.node_net_bandwidth / plan.channels) : own;
    // The first hop is the stream itself; every further hop adds a chunk time.
    double fill = 0;
    if (intra_steps + inter_steps > 1) {
      fill = (intra_steps > 0 ? (intra_steps - 1) * chunk / intra_rate + inter_steps * chunk / inter_rate
                              : (inter_steps - 1) * chunk / inter_rate);
    }
    plan.latency += static_cast<Picoseconds>(std::llround(fill * 1e12));
  }
  if (c.proto == kSimple && ring_loop) {
    // NCCL_BUFFSIZE sets the Simple buffer, and with it the step (until session 27 only send/recv read it).
    // The last slice is one copy at a forwarding step's rate (k.channel_bandwidth), not a loop of steps, and
    // drains only as far as the links hold the channels back (ring_drain_weight; session 35).
    const double step = static_cast<double>(env.buffsize.value_or(p.buffsize)) / p.steps;
    const double per_channel = static_cast<double>(bytes) / plan.channels / n;
    const double slice = std::min(2 * step, per_channel / 2);
    plan.latency += static_cast<Picoseconds>(std::llround(ring_drain_weight(p, comm, plan.flow_rate) * slice /
                                                          k.channel_bandwidth[c.proto] * 1e12));
  }
  return plan;
}

CollectivePlan ideal_collective_plan(CollOp op, std::uint64_t bytes, int root, const CommInfo& comm,
                                     std::span<const int> rank_node, std::span<const int> rank_nic) {
  CollectivePlan plan;
  if (comm.nranks < 2) return plan;
  plan.flows = data_flows(kRing, op, bytes, root, layout(rank_node, rank_nic, comm.all_nvlink));
  plan.channels = comm.coll_channels;
  return plan;
}

}  // namespace commsim::models
