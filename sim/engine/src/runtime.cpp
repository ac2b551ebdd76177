// The NCCL runtime model: host threads issue kernels onto streams; matched send/recv pairs become channel
// flows.
#include "commsim/sim/runtime.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

namespace commsim::sim {
namespace {

using models::Transport;

/// Whether the topology's fabric carries TCP sockets.
bool tcp_fabric(const topo::Topology& topo) {
  return topo.fabric && topo.fabric->kind == topo::FabricKind::Tcp;
}

struct ResourceDef {
  double capacity;
  std::string name;
  double saturation = 0;
};

}  // namespace

struct Runtime::Impl {
  std::vector<ResourceDef> resources;
  std::unordered_map<const topo::LinkInfo*, int> edge_resource;
  std::vector<int> shm_out, shm_in;  ///< virtual host-memory copy limits per GPU
  struct PairCache {
    models::PairInfo info;
    std::vector<int> p2p, shm, net;
    bool shm_done = false, net_done = false;
  };
  std::unordered_map<std::uint64_t, PairCache> pairs;  ///< by src << 32 | dst; nodes never move
  static std::uint64_t key(int src, int dst) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)) << 32) |
           static_cast<std::uint32_t>(dst);
  }
  std::vector<int> resources_of(const topo::Route& r) const {
    std::vector<int> out;
    out.reserve(r.edges.size());
    for (const topo::Edge& e : r.edges) out.push_back(edge_resource.at(&route_graph->operator[](e)));
    return out;
  }
  const topo::Graph* route_graph = nullptr;
  std::optional<topo::RouteTree> tree;  ///< the last source's routes inside its machine
};

Runtime::Runtime(const topo::Topology& topo, const models::TransferModel& model)
    : topo_(topo), model_(model), impl_(std::make_unique<Impl>()) {
  const topo::Graph& g = topo.graph();
  impl_->route_graph = &g;
  const bool tcp = tcp_fabric(topo);
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    const topo::LinkInfo& l = g[*e];
    impl_->edge_resource[&l] = static_cast<int>(impl_->resources.size());
    impl_->resources.push_back({l.bandwidth * model.link_efficiency(l.kind, tcp),
                                g[boost::source(*e, g)].name + "->" + g[boost::target(*e, g)].name,
                                model.link_saturation(l.kind)});
  }
  const double shm = model.shm_bandwidth();
  for (const topo::GpuInfo& gpu : topo.gpus) {
    impl_->shm_out.push_back(shm > 0 ? static_cast<int>(impl_->resources.size()) : -1);
    if (shm > 0) impl_->resources.push_back({shm, gpu.name + " shm out"});
    impl_->shm_in.push_back(shm > 0 ? static_cast<int>(impl_->resources.size()) : -1);
    if (shm > 0) impl_->resources.push_back({shm, gpu.name + " shm in"});
  }
}

Runtime::~Runtime() = default;

std::vector<int> Runtime::via_nearest(int src, int dst, topo::VertexKind kind, const std::string& none) {
  const topo::GpuInfo& a = topo_.gpus.at(src);
  const topo::Graph& g = topo_.graph();
  const topo::RouteTree from_a = topo_.route_tree(a.vertex);
  int best = -1, best_hops = 0;
  for (const topo::Vertex v : from_a.vertices) {  // the machine's vertices, in vertex order
    const topo::VertexInfo& info = topo_.vertex(v);
    const int h = from_a.hops(g, v);
    if (info.kind != kind || info.node != a.node || h == 0) continue;
    if (best < 0 || h < best_hops) {
      best = static_cast<int>(v);
      best_hops = h;
    }
  }
  if (best < 0) throw SimulationError(a.name + " -> " + topo_.gpus.at(dst).name + ": " + none);
  std::vector<int> path = impl_->resources_of(from_a.to(g, static_cast<topo::Vertex>(best)));
  const topo::Vertex via_vertex = static_cast<topo::Vertex>(best);
  const auto rest = impl_->resources_of(topo_.route(via_vertex, topo_.gpus.at(dst).vertex));
  path.insert(path.end(), rest.begin(), rest.end());
  return path;
}

const models::PairInfo& Runtime::pair(int src, int dst) {
  const std::uint64_t key = Impl::key(src, dst);
  auto it = impl_->pairs.find(key);
  if (it != impl_->pairs.end()) return it->second.info;
  const topo::GpuInfo& a = topo_.gpus.at(src);
  const topo::GpuInfo& b = topo_.gpus.at(dst);
  Impl::PairCache pc;
  // Inside one machine a route is the source's route tree walked to the destination (what Topology::route
  // does); consecutive pairs from one source (a communicator's setup lists them so) share the tree.
  topo::Route r;
  if (topo_.vertex(a.vertex).node == topo_.vertex(b.vertex).node && a.node >= 0) {
    if (!impl_->tree || impl_->tree->src != a.vertex) impl_->tree = topo_.route_tree(a.vertex);
    r = impl_->tree->to(topo_.graph(), b.vertex);
  } else {
    r = topo_.route(a.vertex, b.vertex);
  }
  if (r.edges.empty()) {
    throw SimulationError("no path from " + a.name + " to " + b.name + " in the topology");
  }
  pc.info.path = topo_.path_type(src, dst);
  pc.info.nvlinks = topo_.pair_nvlinks(src, dst);
  pc.info.nvlink_bandwidth = a.nvlinks > 0 ? a.nvlink_bandwidth / a.nvlinks : 0;
  pc.info.same_node = a.node == b.node;
  pc.info.tcp = tcp_fabric(topo_);
  pc.info.path_latency = r.latency;
  pc.info.route_bandwidth = r.bandwidth;
  pc.p2p = impl_->resources_of(r);
  return impl_->pairs.emplace(key, std::move(pc)).first->second.info;
}

namespace {

struct KernelInstance {
  const KernelSpec* spec = nullptr;
  int iteration = 0;
  Picoseconds ready = 0;
  Picoseconds start = -1;
  Picoseconds end = -1;
  int pending = 0;
  bool shared = false;
  bool marker = false;  ///< a pure stream wait: no gap, no trace
  int coll_seq = -1;    ///< the k-th collective of this GPU on its communicator
  int sid = -1;         ///< its (GPU, stream), numbered in order of first use
  int deps_at = 0;      ///< its dependencies: kernels (of other streams) that must end first, as
  int deps_count = 0;   ///< deps_pool[deps_at, deps_at + deps_count) (one pool: millions of kernels)
};

std::uint64_t pair_key(int a, int b) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
}

bool is_marker(const KernelSpec& k) {
  return k.ops.empty() && !k.collective && k.compute == 0 && !k.wait_streams.empty();
}

struct Posted {
  int kernel;
  int op;
};

/// Posts waiting on one (communicator, src, dst), oldest first.
struct PostKey {
  int comm, src, dst;
  bool operator==(const PostKey& o) const { return comm == o.comm && src == o.src && dst == o.dst; }
};
struct PostKeyHash {
  std::size_t operator()(const PostKey& k) const {
    return std::hash<std::uint64_t>()((static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.comm)) << 40) ^
                                      (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.src)) << 20) ^
                                      static_cast<std::uint32_t>(k.dst));
  }
};
struct PostQueue {
  std::vector<Posted> items;
  std::size_t head = 0;
};

}  // namespace

KernelSpec p2p_kernel(int gpu, int stream, int comm, std::vector<OpSpec> ops, std::string name) {
  KernelSpec k;
  k.gpu = gpu;
  k.stream = stream;
  k.comm = comm;
  k.ops = std::move(ops);
  k.name = std::move(name);
  return k;
}

RunResult Runtime::run(const Program& program, Trace* trace) {
  if (program.iterations < 1 || program.warmup < 0)
    throw UsageError("a run needs at least one measured iteration");
  EventQueue q;
  FlowNetwork net(q);
  // Names stay here (the trace reads them): a 16,384-GPU cluster has hundreds of thousands of links, and the
  // network of every run would copy them.
  for (const ResourceDef& r : impl_->resources)
    net.add_resource(r.capacity, r.capacity > 0 ? std::string() : r.name, r.saturation);
  if (trace) {
    for (const topo::GpuInfo& g : topo_.gpus) trace->name_gpu(g.index, g.name);
    net.set_load_observer([&](Picoseconds t, FlowNetwork::ResourceId r, double load) {
      trace->counter(impl_->resources[r].name, t, 100.0 * load / net.capacity(r));
    });
  }
  const int n_gpus = static_cast<int>(topo_.gpus.size());
  auto check_gpu = [&](int g, const std::string& what) {
    if (g < 0 || g >= n_gpus) {
      throw UsageError(what + " names GPU " + std::to_string(g) + ", but the topology has GPUs 0-" +
                       std::to_string(n_gpus - 1));
    }
  };

  // Communicators.
  std::vector<models::CommInfo> comms;
  std::vector<std::vector<int>> comm_nodes;  ///< machine of each rank
  for (const CommSpec& c : program.comms) {
    std::vector<models::PairInfo> pairs;
    std::set<int> nodes;
    for (int a : c.gpus) check_gpu(a, "a communicator");
    // The pairs NCCL takes its minima over: every pair inside each machine, and between machines one pair
    // per machine to the next (cross-machine pairs differ only in what the fabric gives them, which the
    // flows see anyway). Linear in the ranks, not quadratic: a 16,384-GPU communicator stays cheap.
    std::map<int, std::vector<int>> by_node;
    for (int a : c.gpus) by_node[topo_.gpus[a].node].push_back(a);
    for (const auto& [node, members] : by_node) {
      nodes.insert(node);
      for (int a : members) {
        for (int b : members) {
          if (a != b) pairs.push_back(pair(a, b));
        }
      }
    }
    if (by_node.size() > 1) {
      for (auto it = by_node.begin(); it != by_node.end(); ++it) {
        auto next = std::next(it) == by_node.end() ? by_node.begin() : std::next(it);
        pairs.push_back(pair(it->second.front(), next->second.front()));
      }
    }
    models::CommInfo info =
        model_.comm_info(static_cast<int>(c.gpus.size()), static_cast<int>(nodes.size()), pairs);
    if (nodes.size() > 1) {
      double worst = 0;
      for (int node : nodes) {
        double sum = 0;
        for (const topo::NicInfo& nic : topo_.nics) {
          if (nic.node == node) sum += nic.bandwidth;
        }
        if (worst == 0 || sum < worst) worst = sum;
      }
      info.node_net_bandwidth = worst;
    }
    comms.push_back(info);
    std::vector<int> rank_node;
    for (int a : c.gpus) rank_node.push_back(topo_.gpus[a].node);
    comm_nodes.push_back(std::move(rank_node));
  }

  // Host threads issue every iteration's launches back to back; kernels become ready after the launch
  // latency.
  std::vector<KernelInstance> kernels;
  std::vector<int> deps_pool;  ///< KernelInstance dependencies
  {
    std::size_t per_iteration = 0;
    for (const LaunchSpec& l : program.launches) per_iteration += l.kernels.size();
    kernels.reserve(per_iteration *
                    static_cast<std::size_t>(std::max(0, program.warmup + program.iterations)));
  }
  std::map<int, Picoseconds> thread_time;
  // Streams are numbered in order of first use (sid); per-stream state lives in vectors indexed by sid.
  std::unordered_map<std::uint64_t, int> sid_of;                 ///< (gpu, stream) -> sid
  std::vector<std::pair<int, int>> stream_key;                   ///< sid -> (gpu, stream)
  std::vector<std::deque<int>> streams;                          ///< sid -> kernels not yet started, in order
  std::vector<int> last_enqueued;                                ///< sid -> last kernel enqueued
  std::unordered_map<std::uint64_t, int> coll_count;             ///< (comm, gpu) -> collectives issued
  std::vector<std::vector<int>> gpu_streams(topo_.gpus.size());  ///< gpu -> its sids
  std::vector<std::vector<int>> sorted_members;  ///< per communicator, its GPUs in order (membership tests)
  for (const CommSpec& c : program.comms) {
    sorted_members.push_back(c.gpus);
    std::sort(sorted_members.back().begin(), sorted_members.back().end());
  }
  const int total_iterations = program.warmup + program.iterations;
  std::vector<Picoseconds> issue_end(total_iterations, 0);
  for (int it = 0; it < total_iterations; ++it) {
    for (const LaunchSpec& l : program.launches) {
      std::vector<int> gpus;
      int ops = 0, colls = 0;
      bool comm_kernel = false, compute_kernel = false;
      for (const KernelSpec& k : l.kernels) {
        if (!k.ops.empty() || k.collective) {
          gpus.push_back(k.gpu);
          comm_kernel = true;
        }
        if (k.compute > 0) compute_kernel = true;
        ops += static_cast<int>(k.ops.size());
        colls += k.collective ? 1 : 0;
      }
      std::sort(gpus.begin(), gpus.end());
      gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
      Picoseconds& t = thread_time[l.thread];
      if (comm_kernel) t += model_.host_launch_time(static_cast<int>(gpus.size()), ops, colls);
      if (compute_kernel) t += model_.compute_launch_time();
      t += l.framework_calls * model_.framework_call_time();
      for (const KernelSpec& k : l.kernels) {
        check_gpu(k.gpu, "a kernel");
        if (k.comm < 0 || static_cast<std::size_t>(k.comm) >= comms.size())
          throw UsageError("kernel on an unknown communicator");
        KernelInstance ki;
        ki.spec = &k;
        ki.iteration = it;
        ki.marker = is_marker(k);
        ki.ready = ki.marker ? t : t + model_.kernel_launch_latency();
        ki.pending = static_cast<int>(k.ops.size());
        bool has_send = false, has_recv = false;
        for (const OpSpec& op : k.ops) {
          check_gpu(op.peer, "an operation");
          if (op.peer == k.gpu) throw UsageError("GPU " + std::to_string(k.gpu) + " sends to itself");
          has_send = has_send || op.kind == OpSpec::Kind::Send;
          has_recv = has_recv || op.kind == OpSpec::Kind::Recv;
        }
        ki.shared = has_send && has_recv;
        if (k.collective) {
          const auto& members = program.comms[k.comm].gpus;
          const auto& sorted = sorted_members[k.comm];
          if (!std::binary_search(sorted.begin(), sorted.end(), k.gpu)) {
            throw UsageError("GPU " + std::to_string(k.gpu) +
                             " issues a collective on a communicator it is not in");
          }
          if (k.collective->root < 0 || static_cast<std::size_t>(k.collective->root) >= members.size())
            throw UsageError("collective root is not a rank of the communicator");
          ki.coll_seq = coll_count[pair_key(k.comm, k.gpu)]++;
        }
        for (int ws : k.wait_streams) {
          auto le = sid_of.find(pair_key(k.gpu, ws));
          if (le != sid_of.end()) {
            if (ki.deps_count == 0) ki.deps_at = static_cast<int>(deps_pool.size());
            deps_pool.push_back(last_enqueued[le->second]);
            ++ki.deps_count;
          }
        }
        const int id = static_cast<int>(kernels.size());
        auto [sit, fresh] = sid_of.try_emplace(pair_key(k.gpu, k.stream), static_cast<int>(streams.size()));
        if (fresh) {
          gpu_streams[k.gpu].push_back(sit->second);
          stream_key.emplace_back(k.gpu, k.stream);
          streams.emplace_back();
          last_enqueued.push_back(-1);
        }
        ki.sid = sit->second;
        streams[ki.sid].push_back(id);
        last_enqueued[ki.sid] = id;
        kernels.push_back(std::move(ki));
      }
    }
    for (const auto& [thread, t] : thread_time) issue_end[it] = std::max(issue_end[it], t);
  }

  RunResult result;
  result.iteration_end.assign(total_iterations, 0);
  result.issue_end = std::move(issue_end);
  std::map<int, std::vector<std::pair<Picoseconds, Picoseconds>>> moving;  ///< per GPU, measured iterations
  auto note_moving = [&](int iteration, int gpu, Picoseconds from) {
    if (iteration >= program.warmup) moving[gpu].push_back({from, q.now()});
  };
  std::vector<char> busy(streams.size(), 0);
  constexpr Picoseconds kNever = std::numeric_limits<Picoseconds>::min();
  std::vector<Picoseconds> last_end(streams.size(), kNever);  ///< sid -> end of its last non-marker kernel
  // Pending posts per (comm, src, dst): sends waiting for receives and receives waiting for sends. A key
  // lives only while posts wait on it (an all-to-all over 1,024 GPUs has a million keys, each used once).
  std::unordered_map<PostKey, PostQueue, PostKeyHash> sends, recvs;
  // Plans depend on the pair only through what the model sees of it (PairInfo): pairs alike share a plan.
  std::map<std::tuple<int, std::uint64_t, bool, int, int, double, bool, bool, Picoseconds, double>,
           models::TransferPlan>
      plans;

  std::function<void(int)> try_start;
  std::function<void(int)> kernel_op_done = [&](int k) {
    KernelInstance& ki = kernels[k];
    if (--ki.pending > 0) return;
    ki.end = q.now();
    busy[ki.sid] = 0;
    if (!ki.marker) last_end[ki.sid] = ki.end;
    result.iteration_end[ki.iteration] = std::max(result.iteration_end[ki.iteration], ki.end);
    if (ki.spec->compute > 0 && ki.iteration == program.warmup)
      result.compute.push_back({ki.spec->gpu, ki.spec->name, ki.start, ki.end});
    if (!ki.marker && ki.spec->stream == 0 && ki.iteration == program.warmup - 1) {
      Picoseconds& at = result.iteration_start[ki.spec->gpu];
      at = std::max(at, ki.end);
    }
    if (ki.spec->compute > 0 && ki.iteration >= program.warmup)
      result.busy[ki.spec->gpu].compute += ki.end - ki.start;
    if (trace && !ki.marker) {
      trace->span(ki.spec->gpu, "stream " + std::to_string(ki.spec->stream), ki.spec->name, ki.start, ki.end,
                  {{"iteration", ki.iteration}});
    }
    for (int other : gpu_streams[ki.spec->gpu]) try_start(other);
  };

  // The links a transfer of `transport` from src to dst crosses.
  auto route = [&](int src, int dst, Transport transport) -> const std::vector<int>& {
    const models::PairInfo& info = pair(src, dst);
    Impl::PairCache& pc = impl_->pairs.at(Impl::key(src, dst));
    if (transport == Transport::Shm) {
      if (!pc.shm_done) {
        // Through host memory: up to the sender's CPU, then (across the socket link if need be) down to dst.
        pc.shm = via_nearest(src, dst, topo::VertexKind::Cpu, "no CPU is reachable");
        if (impl_->shm_out[src] >= 0) pc.shm.push_back(impl_->shm_out[src]);
        if (impl_->shm_in[dst] >= 0) pc.shm.push_back(impl_->shm_in[dst]);
        pc.shm_done = true;
      }
      return pc.shm;
    }
    if (transport == Transport::Net && info.same_node) {
      if (!pc.net_done) {
        pc.net = via_nearest(src, dst, topo::VertexKind::Nic,
                             "P2P and SHM are disabled and the machine has no NIC for the NET transport");
        pc.net_done = true;
      }
      return pc.net;
    }
    return pc.p2p;
  };

  // In-flight transfers and collectives live in slots (reused); completion callbacks carry a slot number
  // and a reference, so they fit std::function's inline storage: no allocation per flow.
  struct TransferState {
    Posted s{}, r{};
    int src = 0, dst = 0;
    int remaining = 0;  ///< parts still moving
    bool recorded = false;
    std::size_t record = 0;
    std::uint64_t bytes = 0;
    Picoseconds start = 0;
    const models::TransferPlan* plan = nullptr;
    const std::vector<int>* path = nullptr;
  };
  std::vector<TransferState> transfers;
  std::vector<int> free_transfers;
  auto finish_transfer = [&](int t) {
    TransferState& ts = transfers[t];
    if (--ts.remaining > 0) return;
    const TransferState done = ts;
    free_transfers.push_back(t);
    if (done.recorded) result.ops[done.record].end = q.now();
    note_moving(kernels[done.s.kernel].iteration, done.src, done.start);
    note_moving(kernels[done.s.kernel].iteration, done.dst, done.start);
    if (trace) {
      trace->span(done.src, "send to GPU" + std::to_string(done.dst), "send " + format_size(done.bytes),
                  done.start, q.now());
    }
    kernel_op_done(done.s.kernel);
    kernel_op_done(done.r.kernel);
  };
  // A channel part has arrived: the transfer ends after the part's fixed overhead.
  auto part_done = [&](int t, int part) {
    q.after(transfers[t].plan->parts[part].overhead, [&finish_transfer, t] { finish_transfer(t); });
  };
  auto start_parts = [&](int t) {
    const TransferState& ts = transfers[t];
    const models::TransferPlan& plan = *ts.plan;
    for (std::size_t i = 0; i < plan.parts.size(); ++i) {
      ++result.flows;
      const int part = static_cast<int>(i);
      net.start_on(*ts.path, plan.parts[i].wire_bytes, plan.channel_rate,
                   [&part_done, t, part] { part_done(t, part); });
    }
  };

  auto begin_transfer = [&](Posted s, Posted r) {
    const KernelInstance& sk = kernels[s.kernel];
    const OpSpec& op = sk.spec->ops[s.op];
    const int src = sk.spec->gpu, dst = op.peer;
    const int comm = sk.spec->comm;
    const std::uint64_t bytes = op.bytes;
    if (kernels[r.kernel].spec->ops[r.op].bytes != bytes) {
      throw SimulationError("GPU " + std::to_string(src) + " sends " + std::to_string(bytes) +
                            " bytes to GPU " + std::to_string(dst) + ", which expects " +
                            std::to_string(kernels[r.kernel].spec->ops[r.op].bytes));
    }
    const models::PairInfo& info = pair(src, dst);
    const bool shared = sk.shared || kernels[r.kernel].shared;
    auto pk =
        std::make_tuple(comm, bytes, shared, static_cast<int>(info.path), info.nvlinks, info.nvlink_bandwidth,
                        info.same_node, info.tcp, info.path_latency, info.route_bandwidth);
    auto pit = plans.find(pk);
    if (pit == plans.end()) pit = plans.emplace(pk, model_.plan(bytes, info, comms[comm], shared)).first;
    const models::TransferPlan& plan = pit->second;
    TransferState ts;
    ts.s = s;
    ts.r = r;
    ts.src = src;
    ts.dst = dst;
    ts.bytes = bytes;
    ts.plan = &plan;
    ts.path = &route(src, dst, plan.transport);
    ts.start = q.now();
    ts.remaining = static_cast<int>(plan.parts.size());
    ts.recorded = kernels[s.kernel].iteration == program.warmup;
    if (ts.recorded) {
      result.ops.push_back({src, dst, bytes, plan.transport, plan.protocol, plan.channels, ts.start, 0});
    }
    ts.record = result.ops.size() - 1;
    int t;
    if (!free_transfers.empty()) {
      t = free_transfers.back();
      free_transfers.pop_back();
      transfers[t] = ts;
    } else {
      t = static_cast<int>(transfers.size());
      transfers.push_back(ts);
    }
    q.after(plan.base_latency, [&start_parts, t] { start_parts(t); });
  };

  auto post = [&](int k, int op_index) {
    const KernelInstance& ki = kernels[k];
    const OpSpec& op = ki.spec->ops[op_index];
    const bool is_send = op.kind == OpSpec::Kind::Send;
    const int src = is_send ? ki.spec->gpu : op.peer;
    const int dst = is_send ? op.peer : ki.spec->gpu;
    const PostKey key{ki.spec->comm, src, dst};
    auto& theirs = is_send ? recvs : sends;
    auto it = theirs.find(key);
    if (it != theirs.end()) {
      PostQueue& pq = it->second;
      const Posted other = pq.items[pq.head++];
      if (pq.head == pq.items.size()) theirs.erase(it);
      if (is_send) {
        begin_transfer({k, op_index}, other);
      } else {
        begin_transfer(other, {k, op_index});
      }
    } else {
      (is_send ? sends : recvs)[key].items.push_back({k, op_index});
    }
  };

  // Copy-engine transfers: no partner, the model's copy plan on the P2P route.
  auto start_copy = [&](int k, int op_index) {
    const KernelInstance& ki = kernels[k];
    const OpSpec& op = ki.spec->ops[op_index];
    const int src = op.peer, dst = ki.spec->gpu;
    const models::TransferPlan plan = model_.copy_plan(op.bytes, pair(src, dst));
    const std::vector<int>* path = &route(src, dst, Transport::P2p);
    const double wire = plan.parts.empty() ? 0.0 : plan.parts.front().wire_bytes;
    const double rate = plan.channel_rate;
    const Picoseconds start = q.now();
    q.after(plan.base_latency, [&, k, path, wire, rate, src, dst, start] {
      ++result.flows;
      net.start_on(*path, wire, rate, [&, k, src, dst, start] {
        note_moving(kernels[k].iteration, src, start);
        note_moving(kernels[k].iteration, dst, start);
        kernel_op_done(k);
      });
    });
  };

  // Collectives: the k-th collective of every rank of a communicator meets; then the model's plan runs.
  std::map<std::pair<int, int>, std::vector<int>> rendezvous;  ///< (comm, seq) -> kernels arrived
  std::map<std::tuple<int, int, std::uint64_t, int>, models::CollectivePlan> coll_plans;
  struct CollState {
    std::vector<int> group;
    int remaining = 0;  ///< flows still moving
    bool recorded = false;
    std::size_t record = 0;
    Picoseconds start = 0;
    const models::CollectivePlan* plan = nullptr;
    int comm = 0;
  };
  std::vector<CollState> colls;
  std::vector<int> free_colls;
  auto finish_coll = [&](int c_id) {
    if (--colls[c_id].remaining > 0) return;
    CollState done = std::move(colls[c_id]);
    free_colls.push_back(c_id);
    if (done.recorded) result.collectives[done.record].end = q.now();
    for (int k : done.group) note_moving(kernels[k].iteration, kernels[k].spec->gpu, done.start);
    for (int k : done.group) kernel_op_done(k);
  };
  auto start_coll_flows = [&](int c_id) {
    const models::CollectivePlan& plan = *colls[c_id].plan;
    if (plan.flows.empty()) {
      colls[c_id].remaining = 1;
      finish_coll(c_id);
      return;
    }
    const std::vector<int>& gpus = program.comms[colls[c_id].comm].gpus;
    for (const models::CollFlow& f : plan.flows) {
      const int src = gpus[f.src], dst = gpus[f.dst];
      ++result.flows;
      net.start_on(route(src, dst, model_.transport(pair(src, dst))), f.wire_bytes, plan.flow_rate,
                   [&finish_coll, c_id] { finish_coll(c_id); });
    }
  };
  auto begin_collective = [&](const std::vector<int>& group) {
    const KernelInstance& first = kernels[group.front()];
    const int comm = first.spec->comm;
    const CollectiveSpec& c = *first.spec->collective;
    for (int k : group) {
      const CollectiveSpec& o = *kernels[k].spec->collective;
      if (o.op != c.op || o.bytes != c.bytes || o.root != c.root) {
        throw SimulationError("collective mismatch on communicator " + std::to_string(comm) + ": GPU " +
                              std::to_string(first.spec->gpu) + " issues " + models::coll_op_name(c.op) +
                              " of " + std::to_string(c.bytes) + " bytes, GPU " +
                              std::to_string(kernels[k].spec->gpu) + " issues " + models::coll_op_name(o.op) +
                              " of " + std::to_string(o.bytes) + " bytes at the same position");
      }
    }
    auto pk = std::make_tuple(comm, static_cast<int>(c.op), c.bytes, c.root);
    auto pit = coll_plans.find(pk);
    if (pit == coll_plans.end())
      pit = coll_plans.emplace(pk, model_.collective(c.op, c.bytes, c.root, comms[comm], comm_nodes[comm]))
                .first;
    const models::CollectivePlan& plan = pit->second;
    const Picoseconds start = q.now();
    const bool recorded = first.iteration == program.warmup;
    const std::size_t record = result.collectives.size();
    if (recorded) {
      result.collectives.push_back({c.op, c.bytes, plan.algorithm, plan.protocol, plan.channels, start, 0});
    }
    // One slot per collective, shared by every flow's completion callback (a 16,384-rank collective starts
    // ~300,000 flows).
    CollState cs;
    cs.group = group;
    cs.remaining = static_cast<int>(plan.flows.size());
    cs.recorded = recorded;
    cs.record = record;
    cs.start = start;
    cs.plan = &plan;
    cs.comm = comm;
    int c_id;
    if (!free_colls.empty()) {
      c_id = free_colls.back();
      free_colls.pop_back();
      colls[c_id] = std::move(cs);
    } else {
      c_id = static_cast<int>(colls.size());
      colls.push_back(std::move(cs));
    }
    q.after(plan.latency, [&start_coll_flows, c_id] { start_coll_flows(c_id); });
  };

  // A kernel starts on its stream (scheduled by try_start; the event carries only the kernel's index).
  auto kernel_start = [&](int k) {
    KernelInstance& ki = kernels[k];
    ki.start = q.now();
    if (ki.spec->collective) {
      ki.pending = 1;
      auto& arrived = rendezvous[{ki.spec->comm, ki.coll_seq}];
      arrived.push_back(k);
      if (arrived.size() == program.comms[ki.spec->comm].gpus.size()) {
        const std::vector<int> group = std::move(arrived);
        rendezvous.erase({ki.spec->comm, ki.coll_seq});
        begin_collective(group);
      }
      return;
    }
    if (ki.spec->compute > 0) {
      ki.pending = 1;
      q.after(ki.spec->compute, [&kernel_op_done, k] { kernel_op_done(k); });
      return;
    }
    if (ki.spec->ops.empty()) {
      ki.pending = 1;
      kernel_op_done(k);
      return;
    }
    for (std::size_t i = 0; i < ki.spec->ops.size(); ++i) {
      if (ki.spec->ops[i].kind == OpSpec::Kind::Copy) {
        start_copy(k, static_cast<int>(i));
      } else {
        post(k, static_cast<int>(i));
      }
    }
  };
  try_start = [&](int sid) {
    auto& queue = streams[sid];
    if (busy[sid] || queue.empty()) return;
    const int k = queue.front();
    for (int i = 0; i < kernels[k].deps_count; ++i) {
      const int d = deps_pool[kernels[k].deps_at + i];
      if (kernels[d].end < 0) return;  // woken again when that kernel ends
    }
    queue.pop_front();
    busy[sid] = 1;
    Picoseconds when = kernels[k].ready;
    if (last_end[sid] != kNever && !kernels[k].marker)
      when = std::max(when, last_end[sid] + model_.kernel_gap());
    q.at(std::max(when, q.now()), [&kernel_start, k] { kernel_start(k); });
  };
  // In (gpu, stream) order, as before streams were numbered: equal-time events keep their order.
  std::vector<int> by_key(streams.size());
  for (std::size_t i = 0; i < by_key.size(); ++i) by_key[i] = static_cast<int>(i);
  std::sort(by_key.begin(), by_key.end(), [&](int a, int b) { return stream_key[a] < stream_key[b]; });
  for (int sid : by_key) try_start(sid);
  if (hooks_.cancel || hooks_.progress) {
    // Poll every 4,096 events: cheap next to the events themselves, and well under a millisecond apart.
    const auto wall_start = std::chrono::steady_clock::now();
    auto last_report = wall_start;
    auto poll = [&] {
      if (hooks_.cancel && hooks_.cancel->load(std::memory_order_relaxed)) return false;
      if (hooks_.progress) {
        const auto now = std::chrono::steady_clock::now();
        if (std::chrono::duration<double>(now - last_report).count() >= hooks_.progress_interval_s) {
          last_report = now;
          RunProgress p;
          p.now = q.now();
          p.events = q.events_run();
          p.flows = result.flows;
          p.active_flows = net.active_flows();
          p.wall_seconds = std::chrono::duration<double>(now - wall_start).count();
          hooks_.progress(p);
        }
      }
      return true;
    };
    result.events = q.run(poll, 4096);
    if (!q.empty()) {
      throw Interrupted("interrupted at " + std::to_string(static_cast<double>(q.now()) / 1e6) +
                        " us of simulated time, after " + std::to_string(result.events) + " events and " +
                        std::to_string(result.flows) + " flows");
    }
  } else {
    result.events = q.run();
  }
  result.recomputations = net.recomputations();
  result.solved_flows = net.solved_flows();
  result.flow_classes = net.coalesced_flows();

  // Anything left means a send or receive without a partner: report who waits on what.
  std::ostringstream waits;
  int stuck = 0;
  for (const KernelInstance& ki : kernels) {
    if (ki.end >= 0) continue;
    if (++stuck > 8) continue;
    waits << "\n  GPU " << ki.spec->gpu << " stream " << ki.spec->stream << " '" << ki.spec->name
          << "' (iteration " << ki.iteration << ")";
    if (ki.start < 0) {
      bool dep_waiting = false;
      for (int i = 0; i < ki.deps_count; ++i)
        dep_waiting = dep_waiting || kernels[deps_pool[ki.deps_at + i]].end < 0;
      waits << (dep_waiting ? " never started: it waits for another stream of its GPU that did not finish"
                            : " never started: an earlier kernel on its stream did not finish");
      continue;
    }
    if (ki.spec->collective) {
      const auto& members = program.comms[ki.spec->comm].gpus;
      std::set<int> arrived;
      auto rit = rendezvous.find({ki.spec->comm, ki.coll_seq});
      if (rit != rendezvous.end()) {
        for (int k : rit->second) arrived.insert(kernels[k].spec->gpu);
      }
      waits << " waits in " << models::coll_op_name(ki.spec->collective->op) << " for GPU(s)";
      for (int g : members) {
        if (!arrived.count(g)) waits << " " << g;
      }
      waits << " on communicator " << ki.spec->comm;
      continue;
    }
    for (const auto* table : {&sends, &recvs}) {
      std::map<std::tuple<int, int, int>, const PostQueue*> sorted;  // in (comm, src, dst) order
      for (const auto& [k, list] : *table) sorted[{k.comm, k.src, k.dst}] = &list;
      for (const auto& [key, list] : sorted) {
        for (std::size_t i = list->head; i < list->items.size(); ++i) {
          const Posted& p = list->items[i];
          if (&kernels[p.kernel] != &ki) continue;
          const bool is_send = table == &sends;
          waits << (is_send ? " waits for GPU " : " waits for a send from GPU ")
                << (is_send ? std::get<2>(key) : std::get<1>(key)) << (is_send ? " to receive" : "")
                << " on communicator " << std::get<0>(key);
        }
      }
    }
  }
  if (stuck > 0) {
    throw SimulationError("the schedule deadlocks: " + std::to_string(stuck) + " kernel(s) cannot finish" +
                          waits.str());
  }
  for (auto& [gpu, spans] : moving) {
    std::sort(spans.begin(), spans.end());
    Picoseconds total = 0, lo = -1, hi = -1;
    for (const auto& [a, b] : spans) {
      if (a > hi) {
        total += hi - lo;
        lo = a;
        hi = b;
      } else {
        hi = std::max(hi, b);
      }
    }
    result.busy[gpu].transfer = total + (hi - lo);
  }
  const Picoseconds first = program.warmup > 0 ? result.iteration_end[program.warmup - 1] : 0;
  result.per_iteration = (result.iteration_end.back() - first) / program.iterations;
  return result;
}

}  // namespace commsim::sim
