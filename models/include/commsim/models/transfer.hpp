// Transfer cost models: how NCCL moves one send/recv (transport, protocol, channels, chunks, rates,
// overheads). Models answer questions; they never schedule events. The simulator turns a TransferPlan into
// flows.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "commsim/core/enum_names.hpp"
#include "commsim/core/units.hpp"
#include "commsim/models/link_kind.hpp"
#include "commsim/models/nccl_env.hpp"
#include "commsim/models/params.hpp"

namespace commsim::models {

enum class Transport { P2p, Shm, Net };
enum class Protocol { Ll, Ll128, Simple };
/// NCCL's names: "P2P", "SHM", "NET".
inline constexpr EnumNames<Transport, 3> kTransportNames{
    {{Transport::P2p, "P2P"}, {Transport::Shm, "SHM"}, {Transport::Net, "NET"}}};
/// NCCL's names: "LL", "LL128", "Simple".
inline constexpr EnumNames<Protocol, 3> kProtocolNames{
    {{Protocol::Ll, "LL"}, {Protocol::Ll128, "LL128"}, {Protocol::Simple, "Simple"}}};
const char* transport_name(Transport t);
const char* protocol_name(Protocol p);

/// NCCL collectives commsim models (alltoall is grouped send/recv and goes through plan()).
enum class CollOp { AllReduce, AllGather, ReduceScatter, Broadcast, Reduce };
inline constexpr int kCollOpCount = 5;  ///< CollOp's values are 0 .. kCollOpCount - 1
/// Collective algorithms commsim models (NVLS, CollNet and PAT are off or absent on the modelled machines).
enum class Algorithm { Ring, Tree };
/// "all_reduce", ...: as nccl-tests and commsim name them.
inline constexpr EnumNames<CollOp, 5> kCollOpNames{{{CollOp::AllReduce, "all_reduce"},
                                                    {CollOp::AllGather, "all_gather"},
                                                    {CollOp::ReduceScatter, "reduce_scatter"},
                                                    {CollOp::Broadcast, "broadcast"},
                                                    {CollOp::Reduce, "reduce"}}};
/// NCCL's names: "Ring", "Tree".
inline constexpr EnumNames<Algorithm, 2> kAlgorithmNames{
    {{Algorithm::Ring, "Ring"}, {Algorithm::Tree, "Tree"}}};
const char* coll_op_name(CollOp op);  ///< "all_reduce", as nccl-tests and commsim name them
const char* algorithm_name(Algorithm a);

/// What a model needs to know about one GPU pair (derived from the topology by the simulator).
struct PairInfo {
  PathType path = PathType::Sys;  ///< NCCL's path type between the two GPUs
  int nvlinks = 0;                ///< NVLinks on the path (per GPU for NVSwitch), 0 if none
  double nvlink_bandwidth = 0;    ///< peak bytes/s of one NVLink of this GPU, per direction
  bool same_node = true;
  bool tcp = false;              ///< the machines are joined by TCP sockets
  Picoseconds path_latency = 0;  ///< one-way latency of the route
  double route_bandwidth = 0;    ///< peak bytes/s of the route's slowest link
  bool nvswitch = false;         ///< both GPUs hang off one machine's NVSwitch fabric
};

/// Communicator facts NCCL derives at init (channels, chunk size), for one communicator.
struct CommInfo {
  int nranks = 2;
  int nnodes = 1;
  bool all_nvlink = true;           ///< every pair of local ranks is NVLink-connected
  int coll_channels = 2;            ///< comm->nChannels
  int p2p_channels = 2;             ///< comm->p2pnChannels
  int p2p_channels_per_peer = 2;    ///< comm->p2pnChannelsPerPeer
  std::uint64_t p2p_chunksize = 0;  ///< Simple step size for send/recv, bytes
  std::uint64_t ll_threshold = 0;   ///< per-channel LL threshold, bytes
  // Collective facts (NCCL's ring/tree graphs, src/graph/search.cc, as the tuner sees them).
  double nccl_intra_bandwidth = 0;  ///< bus bytes/s NCCL's intra-node graph reaches (nChannels x bwIntra)
  double node_net_bandwidth = 0;  ///< NIC bytes/s of the worst-served node: NCCL's inter-node graph bandwidth
                                  ///< (set by the simulator from the topology; 0 on one node)
  bool intra_pcie = false;        ///< the intra-node graph runs over PCIe (NCCL's NCCL_HW_PCI latencies)
  bool net_tcp = false;           ///< inter-node traffic goes over TCP sockets (fabric or NCCL_IB_DISABLE)
  /// Every pair of local ranks meets through one NVSwitch fabric: NCCL's tree search on one such machine is
  /// reproduced (models/src/collective.cpp, tree_graph_of), elsewhere a tree is one chain in ring order.
  bool nvswitch = false;
  int sm =
      0;  ///< compute capability x 10 of the communicator's GPUs (90: Hopper; 0: unknown, no tree search)
  double nccl_gpu_nvlink = 0;  ///< bytes/s of NVLink NCCL's graph search gives each GPU (nvlinks x link rate)
  /// bytes/s of NVLink a ring edge crosses in the topology, before any efficiency: a GPU's switch port on an
  /// NVSwitch, a pair's bundle on direct NVLink (links x the topology's link rate), the worst over the
  /// communicator's pairs; 0 unless every pair of local ranks is P2P over NVLink
  double gpu_nvlink_bandwidth = 0;
  int ring_graph_channels = 0;  ///< channels of NCCL's ring graph before duplication (the tree graph's count)
};

/// One stream of collective data between two ranks of the communicator.
struct CollFlow {
  int src = 0;            ///< communicator rank
  int dst = 0;            ///< communicator rank
  double wire_bytes = 0;  ///< bytes on the links, protocol overhead included
  /// Share of the plan's channels whose data this flow carries: its rate cap is flow_rate x channel_share
  /// (below 1 where a tree's channels run different chains and a pair is on only some of them).
  double channel_share = 1;
};

/// How one collective runs: after `latency`, every flow starts; the collective ends when the last one does.
struct CollectivePlan {
  Algorithm algorithm = Algorithm::Ring;
  Protocol protocol = Protocol::Simple;
  int channels = 1;
  Picoseconds latency = 0;  ///< device-side fixed cost: protocol start plus per-step hop latencies
  double flow_rate =
      0;  ///< wire bytes/s cap of a flow on every channel (x CollFlow::channel_share; 0 = unlimited)
  std::vector<CollFlow> flows;  ///< in rank order of the ring or tree
  double nccl_estimate_us = 0;  ///< NCCL's own tuner estimate for the chosen pair (what it ranked on)
};

/// One channel's share of an operation.
struct ChannelPart {
  std::uint64_t bytes = 0;   ///< user data bytes
  double wire_bytes = 0;     ///< bytes on the links (LL doubles them)
  int steps = 0;             ///< chunk steps
  Picoseconds overhead = 0;  ///< per-channel fixed time (step handshakes, pipeline fill)
  double rate = 0;  ///< wire bytes/s this part can move, when it differs from the plan's channel_rate
};

/// How one send/recv moves: the simulator starts one flow per non-empty part, each capped at `channel_rate`.
struct TransferPlan {
  Transport transport = Transport::P2p;
  Protocol protocol = Protocol::Simple;
  int channels = 1;
  std::uint64_t chunk = 0;       ///< data bytes per step
  Picoseconds base_latency = 0;  ///< from both sides ready to the first byte moving
  double channel_rate = 0;       ///< wire bytes/s one channel can move (0 = unlimited)
  std::vector<ChannelPart> parts;
};

/// The warps NCCL's p2p kernel (src/device/sendrecv.h, 640 threads: 20 warps a channel) gives one channel
/// part of a send/recv at each end. A channel's warps are split evenly over the works (group rounds) its
/// batch carries; a work that both sends and receives on the channel gives its send one warp more than its
/// receive. The default is one work that sends and receives: 10 + 9.
struct PartWarps {
  std::uint8_t send = 10;  ///< the sender's warps on this part's channel
  std::uint8_t recv = 9;   ///< the receiver's warps on this part's channel
  /// Directions moving data to or from another GPU on this part's channel batch at each end, this part's
  /// included (a work that sends and receives counts 2, a copy to self 0): they share the channel's budget
  /// (p2p.channel_budget). 0: not known (no budget applies).
  std::uint8_t send_load = 0;
  std::uint8_t recv_load = 0;
  /// Other GPUs of its machine the end's group both sends to and receives from: the fewer of its distinct
  /// destinations and sources there (p2p.peer_ramp); 0 for a lone direction (fan-out, fan-in) or not known.
  std::uint8_t send_peers = 0;
  std::uint8_t recv_peers = 0;
  /// Channels of the end's group that carry parts to or from other GPUs of its machine (its port's offered
  /// load).
  std::uint8_t send_channels = 0;
  std::uint8_t recv_channels = 0;
  bool operator==(const PartWarps&) const = default;
};

/// One end's view of one channel part of a grouped operation (TransferModel::p2p_warps): the warps the
/// kernel gives it and the directions to or from other GPUs its channel batch carries (PartWarps::send_load).
struct PartSlot {
  std::uint8_t warps = 0;
  std::uint8_t load = 0;
  std::uint8_t peers = 0;  ///< its end's PartWarps::send_peers or recv_peers (the same for every part of an
                           ///< operation)
  std::uint8_t channels = 0;  ///< its end's PartWarps::send_channels or recv_channels (likewise)
  bool operator==(const PartSlot&) const = default;
};
/// TransferModel::p2p_warps' answer: for each operation of a group, the slots of its channel parts (none: the
/// default of plan(bool)). One flat array, not a vector per operation: an all-to-all over 1,024 GPUs asks
/// for 2,046 operations on each of them.
class GroupSlots {
 public:
  explicit GroupSlots(std::size_t ops = 0) : start_(ops + 1, 0) {}
  /// Operations.
  std::size_t size() const { return start_.size() - 1; }
  std::span<const PartSlot> operator[](std::size_t op) const {
    return {slots_.data() + start_[op], start_[op + 1] - start_[op]};
  }
  /// Fills it: `parts[i]` slots for operation i (zeroed), returned as writable spans by part().
  void layout(std::span<const std::uint32_t> parts) {
    start_.assign(parts.size() + 1, 0);
    for (std::size_t i = 0; i < parts.size(); ++i) start_[i + 1] = start_[i] + parts[i];
    slots_.assign(start_.back(), PartSlot{});
  }
  PartSlot& part(std::size_t op, std::size_t p) { return slots_[start_[op] + p]; }

 private:
  std::vector<std::uint32_t> start_;  ///< operation i's slots are [start_[i], start_[i + 1])
  std::vector<PartSlot> slots_;
};

inline constexpr PartWarps kSharedWarps{10, 9};  ///< one work that sends and receives on the channel
/// One work that only sends (or only receives): the kernel rounds a work's warps down to its send and receive
/// split (10 + 9), so a lone direction gets 19.
inline constexpr PartWarps kSoloWarps{19, 19};

/// One operation of one GPU's group of send/recv calls (ncclGroupStart .. ncclGroupEnd), as NCCL's planner
/// sees it (src/enqueue.cc scheduleP2pTasksToPlan).
struct GroupOp {
  enum class Dir { Send, Recv, Self };  ///< Self: a send to this rank and its matching receive, out of place
  Dir dir = Dir::Send;
  int peer = 0;  ///< communicator rank of the other side (this rank for Self)
  std::uint64_t bytes = 0;
};

class TransferModel {
 public:
  virtual ~TransferModel() = default;
  /// Communicator facts for `nranks` ranks on `nnodes` machines; `pairs` lists every ordered pair of the
  /// communicator's ranks as seen from one rank (NCCL takes minima over all of them).
  virtual CommInfo comm_info(int nranks, int nnodes, std::span<const PairInfo> pairs) const = 0;
  virtual Transport transport(const PairInfo& pair) const = 0;
  /// How a send/recv of `bytes` moves. `warps`: what each end gives each channel part (p2p_warps), one entry
  /// for every part, or a single entry that applies to all of them.
  virtual TransferPlan plan(std::uint64_t bytes, const PairInfo& pair, const CommInfo& comm,
                            std::span<const PartWarps> warps) const = 0;
  /// The same with every part alike: `shared_channel`, one work that sends and receives (kSharedWarps), else
  /// one that only sends or only receives (kSoloWarps).
  TransferPlan plan(std::uint64_t bytes, const PairInfo& pair, const CommInfo& comm,
                    bool shared_channel) const {
    const PartWarps w = shared_channel ? kSharedWarps : kSoloWarps;
    return plan(bytes, pair, comm, std::span<const PartWarps>(&w, 1));
  }
  /// For one rank's group of operations (`ops`, in the order they were issued; `rank_node[r]` the machine of
  /// communicator rank r), the warps NCCL's kernel gives each operation's direction on each of its channel
  /// parts: result[i][p]. NCCL orders the group by its p2p schedule (rounds of peer deltas), stripes round
  /// k's parts over channels from a base that reverses k's bits, and lets a channel's works share its warps.
  /// An empty list for an operation means the default of plan(bool). The base model (no such kernel) returns
  /// empty lists (GroupSlots). Each part also says how many directions to or from other GPUs its channel
  /// batch carries, and (the same for every part of the group) how many GPUs of its machine the group both
  /// sends to and receives from and how many channels carry parts to or from them (p2p.peer_ramp).
  virtual GroupSlots p2p_warps(const CommInfo& comm, int rank, std::span<const int> rank_node,
                               std::span<const GroupOp> ops) const {
    (void)comm, (void)rank, (void)rank_node;
    return GroupSlots(ops.size());
  }
  /// A send to oneself with its receive (out of place): the kernel's warps copy `bytes` within the GPU, in
  /// the parts plan() would cut, `warps[p]` warps on part p (one entry: every part). Time from the kernel
  /// reaching the work to the last part copied (ps).
  virtual Picoseconds self_copy_time(std::uint64_t bytes, const CommInfo& comm,
                                     std::span<const std::uint8_t> warps) const {
    (void)bytes, (void)comm, (void)warps;
    return 0;
  }
  /// A copy-engine transfer (cudaMemcpyPeerAsync) of `bytes` over `pair`: one part, its latency and rate cap.
  virtual TransferPlan copy_plan(std::uint64_t bytes, const PairInfo& pair) const = 0;
  /// How NCCL runs collective `op` of `bytes` (nccl-tests' size column) rooted at communicator rank `root`
  /// (broadcast, reduce) on a communicator whose rank r lives on machine `rank_node[r]`. `rank_nic[r]`: the
  /// NIC (index within its machine) rank r reaches over PCIe alone, without another GPU or the CPUs'
  /// interconnect, -1 when it has none; empty when every rank has one. Across machines NCCL enters and leaves
  /// each machine through GPUs with such a NIC. Throws UsageError when NCCL_ALGO/NCCL_PROTO leave no
  /// algorithm and protocol for the operation.
  virtual CollectivePlan collective(CollOp op, std::uint64_t bytes, int root, const CommInfo& comm,
                                    std::span<const int> rank_node, std::span<const int> rank_nic) const = 0;
  /// Usable fraction of a link's peak bandwidth. `tcp`: the fabric carries TCP sockets (it matters for
  /// Network links only).
  virtual double link_efficiency(LinkKind link, bool tcp) const = 0;
  /// How sharply a link saturates (see FlowNetwork::add_resource): 0 for a hard limit.
  virtual double link_saturation(LinkKind link) const = 0;
  /// CPU time for one thread to issue one group that launches kernels on `gpus` GPUs with `ops` send/recv
  /// operations and `colls` collectives in all.
  virtual Picoseconds host_launch_time(int gpus, int ops, int colls = 0) const = 0;
  /// CPU time for one thread to launch one compute kernel.
  virtual Picoseconds compute_launch_time() const = 0;
  /// GPU time one timing event between back-to-back operations adds (ModelParams::timing_event).
  virtual Picoseconds timing_event_time() const { return 0; }
  /// CPU time the framework layer above NCCL (PyTorch's ProcessGroupNCCL) adds per call.
  virtual Picoseconds framework_call_time() const = 0;
  virtual Picoseconds kernel_launch_latency() const = 0;
  virtual Picoseconds kernel_gap() const = 0;
  /// Between back-to-back kernels of one stream inside a captured CUDA graph (ModelParams::graph_gap).
  virtual Picoseconds graph_kernel_gap() const { return 0; }
  /// Cross-GPU join per iteration of a graph one thread captured over several GPUs (ModelParams::graph_join).
  virtual Picoseconds graph_join_time() const { return 0; }
  /// SHM transfers are also limited by this host-memory rate per GPU and direction (bytes/s).
  virtual double shm_bandwidth() const = 0;
  /// SHM transfers through one CPU together are limited by its memory's rate (bytes/s; 0: no limit).
  virtual double shm_host_memory_bandwidth() const { return 0; }
};

/// The registry: every transfer model by name, with a one-line description, in one list.
struct TransferModelInfo {
  std::string_view name;
  std::string_view description;
  std::unique_ptr<TransferModel> (*make)(const ModelParams&, const NcclEnv&);
};
std::span<const TransferModelInfo> transfer_models();
/// Throws UsageError listing the valid names when `name` is unknown.
std::unique_ptr<TransferModel> make_transfer_model(std::string_view name, const ModelParams& params,
                                                   const NcclEnv& env);

}  // namespace commsim::models
