// Transfer-model parameter sets (models/params/*.toml): NCCL constants, overheads, per-channel rates.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "commsim/core/units.hpp"

namespace commsim::models {

/// Per-protocol costs. Bandwidths are bytes/s per direction; latencies picoseconds.
struct ProtocolParams {
  Picoseconds base_latency = 0;     ///< per operation, once both sides are ready
  Picoseconds step_overhead = 0;    ///< per chunk step on one channel (Simple)
  Picoseconds channel_latency = 0;  ///< per channel the operation spreads over (work setup, flag traffic)
  double channel_bandwidth = 0;     ///< one channel's data rate
  double fill_bandwidth = 0;  ///< rate of the pipeline's last stage (the receiver's copy out of the FIFO);
                              ///< the first chunk of each channel pays chunk / fill_bandwidth extra (0: none)
  double wire_efficiency = 1.0;  ///< data bytes per wire byte (LL: 0.5)
};

/// Collective costs per protocol, indexed by Protocol (LL, LL128, Simple).
struct CollectiveParams {
  Picoseconds base_latency[3] = {0, 0, 0};     ///< per collective, from all ranks ready to data moving
  Picoseconds hop_latency[3] = {0, 0, 0};      ///< per intra-node step of the algorithm
  Picoseconds net_hop_latency[3] = {0, 0, 0};  ///< per inter-node step
  double channel_bandwidth[3] = {0, 0, 0};     ///< data bytes/s one channel moves per direction
  double efficiency[5] = {1, 1, 1, 1, 1};      ///< per CollOp: achieved fraction of the links' usable rate
};

/// Prediction band, relative to the prediction t: [t (1 - below), t (1 + above)], per size regime
/// (latency-bound below kBandRegimeBytes, bandwidth-bound from it). `commsim calibrate` writes it from the
/// measured run-to-run and machine-to-machine spread plus the fit's own standard errors; unfitted sets carry
/// a wider datasheet band.
struct BandParams {
  double latency_below = 0.5;
  double latency_above = 0.5;
  double bandwidth_below = 0.25;
  double bandwidth_above = 0.25;
  bool operator==(const BandParams&) const = default;
};

/// Sizes below this (bytes) are latency-bound for bands and held-out reports; from it, bandwidth-bound.
inline constexpr std::uint64_t kBandRegimeBytes = 1ULL << 20;

/// Every tunable of the transfer model. `defaults()` is models/params/nccl-default.toml (embedded).
struct ModelParams {
  std::string name;
  std::string description;
  std::string source;  ///< file the set was read from
  std::string fitted;  ///< where and on what data the set was fitted; empty: not fitted (datasheet estimates)
  std::string gpu;     ///< GPU model the set was fitted for ("H200"); simulate uses it by default on that GPU
  std::string nccl_version;  ///< NCCL library version of the fitted data ("2.28.3"), if known
  /// The fit included transfers between machines over a network (InfiniBand, RoCE, TCP). Without it, the
  /// set's band says nothing about a network: a topology with one gets network_band().
  bool fitted_network = false;

  // NCCL constants.
  int steps = 8;
  std::uint64_t buffsize = 0;
  std::uint64_t ll_buffsize = 0;
  std::uint64_t p2p_ll_threshold = 0;
  std::uint64_t p2p_nvl_chunksize = 0;
  std::uint64_t p2p_pci_chunksize = 0;
  std::uint64_t p2p_net_chunksize = 0;
  int max_channels = 64;
  double nccl_nvlink_bandwidth_sm90 = 0;
  double ring_channel_bandwidth = 0;
  int coll_channels_no_nvlink = 4;  ///< collective channels NCCL's search settles on without P2P NVLink

  // Host and kernel.
  Picoseconds launch_base = 0;
  Picoseconds launch_per_gpu = 0;
  Picoseconds launch_per_op = 0;    ///< per ncclSend/ncclRecv the group enqueues
  Picoseconds launch_compute = 0;   ///< one compute kernel launch
  Picoseconds launch_per_coll = 0;  ///< per collective the call enqueues (algorithm choice, work setup)
  /// Every host cost above (launch_*) times this, a ratio: how fast one machine start's host runs against the
  /// set's (1: as given). A slow virtual machine is slow at every step of an enqueue, not at one of them.
  double launch_scale = 1.0;
  Picoseconds torch_call = 0;  ///< PyTorch's per-call overhead above NCCL (c10d, Python)

  // Copy engines (cudaMemcpyPeerAsync).
  Picoseconds copy_submit = 0;        ///< CPU time per cudaMemcpyPeerAsync call
  Picoseconds copy_latency = 0;       ///< from the copy reaching the head of its stream to data moving
  double copy_nvlink_efficiency = 1;  ///< usable fraction of NVLink peak for copy engines
  double copy_bandwidth = 0;          ///< one copy's rate limit, bytes/s

  // Fixed costs of weight-sync set-up and tear-down (CPU side, not simulated event by event).
  Picoseconds comm_init = 0;        ///< ncclCommInitAll / init_process_group of the sync group
  Picoseconds comm_destroy = 0;     ///< destroying it
  Picoseconds engine_register = 0;  ///< peer access and copy streams of a P2P engine
  Picoseconds engine_stop = 0;
  Picoseconds kernel_launch_latency = 0;
  Picoseconds kernel_gap = 0;
  /// GPU time a timing CUDA event recorded between two back-to-back operations adds to each (commsim-measure
  /// --timing per-iteration, nccl-tests -I 1); what validate adds to predictions of such measurements.
  Picoseconds timing_event = 0;
  /// Between two back-to-back kernels of one stream inside a captured CUDA graph (nccl-tests -G): the graph
  /// launches them without the host, so this replaces kernel_gap there.
  Picoseconds graph_gap = 0;
  /// Per iteration of a CUDA graph that one thread captured over several GPUs: the captured group joins the
  /// GPUs' streams, so each GPU's next kernel also waits for the other GPUs' kernels, plus this much.
  Picoseconds graph_join = 0;

  ProtocolParams simple;
  ProtocolParams ll;
  CollectiveParams coll;
  /// Tree (NCCL_ALGO=Tree): achieved fraction of the rate the ring reaches on the same links, for every flow
  /// of the tree (the chains inside machines and the binary trees between them); a ratio. The datasheet
  /// takes NCCL's tuner factor (0.92), which the tuner's own choice of algorithm also applies.
  double coll_tree_efficiency = 1;
  /// Ring all_reduce, all_gather and reduce_scatter end each loop iteration with a receive-only step (NCCL's
  /// runRing: the final recv, or recvReduceCopy) in which the rank sends nothing. Its time as a fraction of
  /// one sending step (dimensionless): the links carry data k / (k + this) of the time, k = n - 1 sending
  /// steps (2 (n - 1) for all_reduce) on a ring of n ranks. It is why 2 GPUs reach less link rate than 4.
  double coll_ring_recv_step = 0;
  /// Where a ring's channels bind (fewer channels than the links can feed: NCCL_MAX_NCHANNELS, a 2-GPU ring
  /// under a thread per GPU), a Simple ring loop's thread time is its steps' costs, each counted against one
  /// forwarding step (receive or read, then write to the next rank; NCCL's directRecvCopyDirectSend). A
  /// reducing step that sends (recvReduceSend, recvReduceCopySend) costs this many forwarding steps
  /// (dimensionless; 1: the same, the datasheet's).
  double coll_reduce_step = 1;
  /// The receive-only last step of a Simple ring loop (all_gather's and all_reduce's final directRecv,
  /// reduce_scatter's recvReduceCopy) in the same units, where the channels bind (dimensionless; 0: free; the
  /// datasheet's 0.5: it receives and sends nothing). coll_ring_recv_step is its share of link time where the
  /// links bind.
  double coll_channel_recv_step = 0;
  /// LL's ring: the receive-only last step's thread time against any other step's (LL copies every line
  /// out of its buffer, so a reducing step costs what a forwarding one does); dimensionless, 0: free; the
  /// datasheet's 1.
  double coll_ll_recv_step = 0;
  BandParams band;

  // Transports.
  double nvlink_efficiency = 1.0;
  double pcie_efficiency = 1.0;
  double nvlink_saturation = 0;  ///< 0: hard limit; k > 0: smooth saturation (FlowNetwork::add_resource)
  double pcie_saturation = 0;
  /// Rate of a channel part whose work sends or receives only (19 warps) over one that does both (10 + 9):
  /// more warps than 10 scale the rate by (warps / 10)^g, g = ln(solo_speedup) / ln(1.9).
  double solo_speedup = 1.0;
  /// Rate of a channel part whose channel carries two works (5 + 4 warps each) over one work's (10 + 9):
  /// fewer warps than 10 scale the rate by (warps / 10)^g, g = ln(split_rate) / ln(4.44 / 10), the receive's
  /// warps counted as 10/9 of a send's. 0.444 is proportional to the warps.
  double split_rate = 1.0;
  /// Rate of a channel part whose channel carries three works (3 + 2 warps each) over one work's (10 + 9):
  /// from 4.44 warps down, the rate follows (warps / 4.44)^g3 times split_rate, g3 = ln(split3_rate /
  /// split_rate) / ln(1/2). 0: split_rate's power law goes on below 4.44 warps (as before session 18).
  double split3_rate = 0;
  /// What one channel (one CTA on one SM) moves to and from other GPUs, all its works together, in units of
  /// one work's rate (10 + 9 warps) in each direction: a part on a channel whose batch carries d directions
  /// to or from other GPUs moves at most 2 channel_budget / d of that rate (k works that send and receive:
  /// channel_budget / k each), whatever its warps. 0: no budget (each work at its warps' rate alone).
  double channel_budget = 0;
  /// A GPU whose grouped send/recv both sends to and receives from k > 1 other GPUs of its machine over
  /// NVLink (k = the fewer of its distinct destinations and sources there, held at 3; an all-to-all on n
  /// GPUs: n - 1) moves each part slower than its channels alone would, and slowest at first: a part whose
  /// nominal time is T (its bytes at its channel's rate) takes (k - 1) rho^2 (peer_ramp peer_ramp_time (1 -
  /// exp(-T / peer_ramp_time)) + peer_rate_loss T) longer, rho = min(1, the end's channels to other GPUs of
  /// its machine x the channel rate / its NVLink port's rate), the busier end counting. peer_ramp: the
  /// fraction lost at the start, per extra peer (dimensionless); peer_ramp_time: how fast that start-up loss
  /// fades (picoseconds); peer_rate_loss: the fraction lost for good, per extra peer (dimensionless). 0:
  /// none.
  double peer_ramp = 0;
  Picoseconds peer_ramp_time = 0;
  double peer_rate_loss = 0;
  /// A part over NVLink whose end both sends to and receives from other GPUs of its machine (k >= 1: a ring,
  /// a pipeline exchange, an all-to-all; not a fan-out, a fan-in or a lone send) starts slower and speeds up
  /// as it goes: a part whose nominal time is T takes rho^2 port_ramp port_ramp_time (1 - exp(-T /
  /// port_ramp_time)) longer, rho as for the peer loss (the channels to other GPUs of its machine over its
  /// port's rate), the busier such end counting. port_ramp: the fraction lost at the start
  /// (dimensionless); port_ramp_time: how fast it fades (picoseconds). 0: none.
  double port_ramp = 0;
  Picoseconds port_ramp_time = 0;
  /// Bytes/s one channel's 19 warps copy within a GPU: a send to oneself with its receive (out of place).
  double self_copy_bandwidth = 0;
  Picoseconds shm_base_latency = 0;
  double shm_channel_bandwidth = 0;
  double shm_bandwidth = 0;
  /// Bytes/s of SHM data one CPU's (NUMA domain's) memory passes, all GPUs copying through it together: each
  /// byte is written by the sender and read by the receiver, so this is half the DRAM traffic it allows.
  /// 0 (the key left out): not limited.
  double shm_host_memory_bandwidth = 0;
  Picoseconds net_base_latency = 0;
  double net_channel_bandwidth = 0;
  double net_nic_efficiency = 1.0;
  double net_tcp_efficiency = 1.0;
  Picoseconds net_tcp_latency = 0;

  static const ModelParams& defaults();
  /// Reads a parameter file over `base` (keys it omits keep base's values). Unknown keys, values without
  /// units and out-of-range values throw InputError with file, line and column.
  /// A top-level `base` key is refused here: it names a file, which only load() resolves.
  static ModelParams parse(std::string_view toml_text, const std::string& file, const ModelParams& base);
  /// Reads a parameter file over the defaults, or, when it has a top-level `base = "FILE"` (a path relative
  /// to this file's folder), over that set, loaded the same way: a file can hold only what differs from a
  /// fitted set (e.g. one machine start's host costs over models/params/h200.toml). A missing base or a
  /// chain of more than 8 throws InputError at the `base` key.
  static ModelParams load(const std::string& path);
  /// The embedded fitted set for `gpu_model` ("H200"), or nullptr when there is none.
  static const ModelParams* fitted_for_gpu(const std::string& gpu_model);
  /// One line naming the set and where it was fitted, e.g. "h200 (models/params/h200.toml; fitted: ...)";
  /// an unfitted set says that its band is the wider datasheet band.
  std::string provenance() const;
};

/// The band of `params` for a topology whose machines are joined by a network: its own for an unfitted set or
/// one whose fit crossed a network (fitted_network), else each side the wider of its own and the datasheet
/// set's (defaults()), since no transfer of the fit went over a network.
BandParams network_band(const ModelParams& params);

/// The prediction band around `time_us` (microseconds) for a transfer of `bytes`: {lo, hi} in microseconds.
struct Band {
  double lo_us = 0;
  double hi_us = 0;
};
Band band_of(const ModelParams& params, std::uint64_t bytes, double time_us);

}  // namespace commsim::models
