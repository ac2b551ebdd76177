// Program builders for collectives, Megatron 1F1B pipeline steps, weight pushes and gradient sync.
#include "commsim/sim/schedules.hpp"

#include <algorithm>
#include <string>

#include "commsim/core/error.hpp"
#include "commsim/core/limits.hpp"
#include "commsim/workloads/megatron.hpp"

namespace commsim::sim {

using workloads::megatron_steps;
using workloads::PipelineStep;

Framework parse_framework(std::string_view name) {
  if (name == "nccl") return Framework::Nccl;
  if (name == "torch") return Framework::Torch;
  throw UsageError("unknown --framework '" + std::string(name) + "'; valid: nccl, torch");
}

const char* framework_name(Framework f) {
  return f == Framework::Nccl ? "nccl" : "torch";
}

models::CollOp parse_coll_op(std::string_view name) {
  using models::CollOp;
  for (CollOp op :
       {CollOp::AllReduce, CollOp::AllGather, CollOp::ReduceScatter, CollOp::Broadcast, CollOp::Reduce}) {
    if (name == models::coll_op_name(op)) return op;
  }
  throw UsageError("unknown collective '" + std::string(name) +
                   "'; valid: all_reduce, all_gather, reduce_scatter, broadcast, reduce");
}

namespace {

KernelSpec coll_kernel(int gpu, int stream, int comm, models::CollOp op, std::uint64_t bytes, int root) {
  KernelSpec k;
  k.gpu = gpu;
  k.stream = stream;
  k.comm = comm;
  k.collective = CollectiveSpec{op, bytes, root};
  k.name = models::coll_op_name(op);
  return k;
}

KernelSpec compute_kernel(int gpu, Picoseconds duration, const char* name) {
  KernelSpec k;
  k.gpu = gpu;
  k.compute = duration;
  k.name = name;
  return k;
}

KernelSpec wait_kernel(int gpu, int stream, std::vector<int> on) {
  KernelSpec k;
  k.gpu = gpu;
  k.stream = stream;
  k.wait_streams = std::move(on);
  k.name = "wait";
  return k;
}

/// One collective per rank, each issued by its rank's own thread (one process per GPU). Under PyTorch the
/// call goes to the NCCL stream (1), which first waits for the compute stream, and costs the framework's
/// overhead.
/// One collective call per rank of communicator `comm`, each from its own host thread (`first_thread` +
/// rank).
void per_rank_collectives(Program& p, const std::vector<int>& gpus, models::CollOp op, std::uint64_t bytes,
                          int root, Framework framework, int comm = 0, int first_thread = 0) {
  const bool torch = framework == Framework::Torch;
  if (gpus != p.comms.at(static_cast<std::size_t>(comm)).gpus)
    throw Error("per_rank_collectives: the GPUs are not communicator " + std::to_string(comm) + "'s ranks");
  // One launch standing for every rank's (LaunchSpec::thread_per_rank): a 16,384-GPU weight push would hold
  // 12.6 M of them.
  KernelSpec k = coll_kernel(gpus.front(), torch ? 1 : 0, comm, op, bytes, root);
  if (torch) k.wait_streams = {0};
  k.every_rank = true;
  LaunchSpec l{first_thread, {std::move(k)}, torch ? 1 : 0};
  l.thread_per_rank = true;
  p.launches.push_back(std::move(l));
}

}  // namespace

Program collective_program(const std::vector<int>& gpus, models::CollOp op, std::uint64_t bytes, int root,
                           bool thread_per_gpu, Framework framework) {
  if (gpus.size() < 2) throw UsageError(std::string(models::coll_op_name(op)) + " needs at least 2 GPUs");
  if (root < 0 || static_cast<std::size_t>(root) >= gpus.size()) {
    throw UsageError("--root " + std::to_string(root) + " is not a rank: ranks are 0-" +
                     std::to_string(gpus.size() - 1));
  }
  Program p;
  p.comms.push_back({gpus});
  const bool torch = framework == Framework::Torch;
  p.mean_over_threads = !torch;  // timed as nccl-tests and commsim-measure time it
  if (thread_per_gpu || torch) {
    for (std::size_t r = 0; r < gpus.size(); ++r) {
      LaunchSpec l{
          static_cast<int>(r), {coll_kernel(gpus[r], torch ? 1 : 0, 0, op, bytes, root)}, torch ? 1 : 0};
      if (torch) l.kernels.front().wait_streams = {0};
      p.launches.push_back(std::move(l));
    }
  } else {
    LaunchSpec l{0, {}, 0};
    for (int g : gpus) l.kernels.push_back(coll_kernel(g, 0, 0, op, bytes, root));
    p.launches.push_back(std::move(l));
  }
  return p;
}

namespace {

/// Issues one stage's side of Megatron's _communicate in the chosen mode and framework.
class StageComms {
 public:
  StageComms(Program& p, const PipelineSpec& s, int rank) : p_(p), s_(s), r_(rank) {}

  void compute(Picoseconds d, const char* name) {
    p_.launches.push_back({r_, {compute_kernel(gpu(), d, name)}, 0});
  }

  void communicate(bool send_next, bool send_prev, bool recv_prev, bool recv_next) {
    if (!(send_next || send_prev || recv_prev || recv_next)) return;
    // Interleaved pipelines wrap around: the last stage's chunk feeds the first stage's next chunk.
    const int n = static_cast<int>(s_.gpus.size());
    const bool ring = s_.chunks > 1;
    const int prev = r_ > 0 ? s_.gpus[r_ - 1] : ring ? s_.gpus[n - 1] : -1;
    const int next = r_ + 1 < n ? s_.gpus[r_ + 1] : ring ? s_.gpus[0] : -1;
    const std::uint64_t b = s_.activation_bytes;
    struct Op {
      OpSpec spec;
      bool forward_direction;  ///< activations travel forward; gradients backward
    };
    const bool torch = s_.framework == Framework::Torch;
    if (s_.mode == ExchangeMode::Batched) {
      // One batch_isend_irecv, Megatron's op order.
      std::vector<OpSpec> ops;
      if (send_prev) ops.push_back({OpSpec::Kind::Send, prev, b});
      if (recv_prev) ops.push_back({OpSpec::Kind::Recv, prev, b});
      if (send_next) ops.push_back({OpSpec::Kind::Send, next, b});
      if (recv_next) ops.push_back({OpSpec::Kind::Recv, next, b});
      KernelSpec k = p2p_kernel(gpu(), torch ? 1 : 0, 0, std::move(ops), "batch_isend_irecv");
      if (torch) k.wait_streams = {0};
      p_.launches.push_back({r_, {std::move(k)}, torch ? 1 : 0});
      if (torch) p_.launches.push_back({r_, {wait_kernel(gpu(), 0, {1})}, 0});
      return;
    }
    // Megatron's even/odd ordering for isend/irecv.
    std::vector<Op> order;
    if (r_ % 2 == 0) {
      if (send_next) order.push_back({{OpSpec::Kind::Send, next, b}, true});
      if (recv_prev) order.push_back({{OpSpec::Kind::Recv, prev, b}, true});
      if (send_prev) order.push_back({{OpSpec::Kind::Send, prev, b}, false});
      if (recv_next) order.push_back({{OpSpec::Kind::Recv, next, b}, false});
    } else {
      if (recv_prev) order.push_back({{OpSpec::Kind::Recv, prev, b}, true});
      if (send_next) order.push_back({{OpSpec::Kind::Send, next, b}, true});
      if (recv_next) order.push_back({{OpSpec::Kind::Recv, next, b}, false});
      if (send_prev) order.push_back({{OpSpec::Kind::Send, prev, b}, false});
    }
    const bool overlapped = s_.mode == ExchangeMode::Overlapped;
    const char* name_send = "isend";
    const char* name_recv = "irecv";
    if (!torch) {
      if (!overlapped) {  // sequential: one stream and communicator, one operation at a time
        for (const Op& o : order)
          p_.launches.push_back(
              {r_,
               {p2p_kernel(gpu(), 0, 0, {o.spec}, o.spec.kind == OpSpec::Kind::Send ? name_send : name_recv)},
               0});
        return;
      }
      // overlapped: forward direction on (comm 0, stream 1), backward on (comm 1, stream 2); compute joins.
      p_.launches.push_back({r_, {wait_kernel(gpu(), 1, {0}), wait_kernel(gpu(), 2, {0})}, 0});
      for (const Op& o : order) {
        const int ch = o.forward_direction ? 0 : 1;
        p_.launches.push_back({r_,
                               {p2p_kernel(gpu(), ch + 1, ch, {o.spec},
                                           o.spec.kind == OpSpec::Kind::Send ? name_send : name_recv)},
                               0});
      }
      p_.launches.push_back({r_, {wait_kernel(gpu(), 0, {1, 2})}, 0});
      return;
    }
    // PyTorch: every op on the group's NCCL stream (waiting for the compute stream first); with 2 stages
    // Megatron puts one direction on a second group, so it gets its own communicator and stream.
    const bool second_group = overlapped && s_.gpus.size() == 2;
    for (const Op& o : order) {
      const int ch = second_group && !o.forward_direction ? 1 : 0;
      KernelSpec k =
          p2p_kernel(gpu(), ch + 1, ch, {o.spec}, o.spec.kind == OpSpec::Kind::Send ? name_send : name_recv);
      k.wait_streams = {0};
      p_.launches.push_back({r_, {std::move(k)}, 1});
      if (!overlapped) p_.launches.push_back({r_, {wait_kernel(gpu(), 0, {ch + 1})}, 0});
    }
    if (overlapped) p_.launches.push_back({r_, {wait_kernel(gpu(), 0, {1, 2})}, 0});
  }

 private:
  int gpu() const { return s_.gpus[r_]; }
  Program& p_;
  const PipelineSpec& s_;
  int r_;
};

}  // namespace

double pipeline_compute_bound_us(int stages, int microbatches, int chunks, double fwd_us, double bwd_us) {
  return (microbatches + static_cast<double>(stages - 1) / std::max(1, chunks)) * (fwd_us + bwd_us);
}

Program pipeline_program(const PipelineSpec& s) {
  const int n = static_cast<int>(s.gpus.size());
  if (s.activation_bytes == 0) throw UsageError("--activation-bytes must be at least 1B");
  if (s.fwd < 0 || s.bwd < 0) throw UsageError("--fwd-us and --bwd-us must not be negative");
  if (s.chunks < 1) throw UsageError("--chunks must be at least 1, not " + std::to_string(s.chunks));
  if (s.microbatches < 1)
    throw UsageError("--microbatches must be at least 1, not " + std::to_string(s.microbatches));
  // The work of a step is linear in microbatches x stages x chunks, at about 45 us and 1.3 KB each
  // (sim/bench/limits.sh): bounded so that a step simulates in seconds and well under 1 GB.
  constexpr int kMaxMicrobatches = 10000;
  constexpr std::int64_t kMaxPipelineSteps = 200000;
  if (s.microbatches > kMaxMicrobatches) {
    throw UsageError("refused: --microbatches " + std::to_string(s.microbatches) +
                     ": commsim simulates at most " + std::to_string(kMaxMicrobatches) +
                     " microbatches per step");
  }
  if (const std::int64_t steps = std::int64_t{s.microbatches} * n * s.chunks; steps > kMaxPipelineSteps) {
    throw UsageError("refused: " + std::to_string(s.microbatches) + " microbatches x " + std::to_string(n) +
                     " stages x " + std::to_string(s.chunks) + " chunks is " + std::to_string(steps) +
                     " forward and backward steps; commsim simulates at most " +
                     std::to_string(kMaxPipelineSteps) + " in one pipeline");
  }
  // Each stage computes every microbatch forward and backward once: that alone must fit in simulated time.
  try {
    checked_mul(checked_add(s.fwd, s.bwd, "--fwd-us + --bwd-us"),
                std::int64_t{s.microbatches} + static_cast<std::int64_t>(s.gpus.size()),
                "the pipeline's compute time");
  } catch (const ValueError& e) {
    throw UsageError(std::string(e.what()) + ": fewer --microbatches or shorter --fwd-us/--bwd-us");
  }
  if (n < 2) megatron_steps(n, 0, s.microbatches, s.chunks);  // throws the reason
  Program p;
  p.comms.push_back({s.gpus});
  p.comms.push_back({s.gpus});  // the second communicator (overlapped backward direction)
  // With V chunks each stage's forward and backward split evenly over them.
  const Picoseconds fwd = s.fwd / s.chunks, bwd = s.bwd / s.chunks;
  for (int r = 0; r < n; ++r) {
    StageComms c(p, s, r);
    for (const PipelineStep& step : megatron_steps(n, r, s.microbatches, s.chunks)) {
      switch (step.kind) {
        case PipelineStep::Kind::Forward:
          c.compute(fwd, "forward");
          break;
        case PipelineStep::Kind::Backward:
          c.compute(bwd, "backward");
          break;
        case PipelineStep::Kind::Communicate:
          c.communicate(step.send_next, step.send_prev, step.recv_prev, step.recv_next);
          break;
      }
    }
  }
  return p;
}

std::vector<std::uint64_t> tensor_pieces(const workloads::ModelSpec& spec, std::uint64_t bucket_bytes,
                                         bool reverse) {
  auto tensors = spec.tensors();
  if (reverse) std::reverse(tensors.begin(), tensors.end());
  std::vector<std::uint64_t> pieces;
  for (const auto& t : tensors) {
    if (bucket_bytes > 0 && !pieces.empty() && pieces.back() + t.bytes <= bucket_bytes) {
      pieces.back() += t.bytes;
    } else {
      pieces.push_back(t.bytes);
    }
  }
  return pieces;
}

std::vector<std::vector<int>> rollout_groups(const std::vector<int>& trainers,
                                             const std::vector<int>& rollouts) {
  if (trainers.empty()) throw UsageError("--from names no trainer GPU");
  if (rollouts.size() < trainers.size()) {
    throw UsageError(std::to_string(trainers.size()) +
                     " trainers need at least as many rollout GPUs (--to has " +
                     std::to_string(rollouts.size()) + ")");
  }
  for (int t : trainers) {
    if (std::find(rollouts.begin(), rollouts.end(), t) != rollouts.end())
      throw UsageError("--to lists the trainer GPU " + std::to_string(t) + " itself");
    if (std::count(trainers.begin(), trainers.end(), t) > 1)
      throw UsageError("--from lists GPU " + std::to_string(t) + " twice");
  }
  std::vector<std::vector<int>> groups;
  const std::size_t n = trainers.size(), m = rollouts.size();
  std::size_t next = 0;
  for (std::size_t t = 0; t < n; ++t) {
    const std::size_t share = m / n + (t < m % n ? 1 : 0);
    std::vector<int> g{trainers[t]};
    g.insert(g.end(), rollouts.begin() + static_cast<std::ptrdiff_t>(next),
             rollouts.begin() + static_cast<std::ptrdiff_t>(next + share));
    next += share;
    groups.push_back(std::move(g));
  }
  return groups;
}

Program broadcast_pieces_program(const std::vector<std::vector<int>>& groups,
                                 const std::vector<std::uint64_t>& pieces, Framework framework,
                                 bool thread_per_gpu) {
  if (groups.empty()) throw UsageError("a broadcast needs a trainer");
  for (const auto& g : groups) {
    if (g.size() < 2) throw UsageError("a broadcast needs at least 2 GPUs (--from and at least one --to)");
  }
  if (pieces.empty()) throw UsageError("nothing to broadcast");
  Program p;
  for (const auto& g : groups) p.comms.push_back({g});
  p.launches.reserve(pieces.size() * groups.size());
  for (std::uint64_t b : pieces) {
    int first_thread = 0;
    for (std::size_t c = 0; c < groups.size(); ++c) {
      const std::vector<int>& gpus = groups[c];
      const int comm = static_cast<int>(c);
      if (framework == Framework::Torch || thread_per_gpu) {
        per_rank_collectives(p, gpus, models::CollOp::Broadcast, b, 0, framework, comm, first_thread);
        first_thread += static_cast<int>(gpus.size());
      } else {
        // One host thread per trainer's group, driving all of it: one kernel standing for every rank's.
        LaunchSpec l{comm, {coll_kernel(gpus.front(), 0, comm, models::CollOp::Broadcast, b, 0)}, 0};
        l.kernels.front().every_rank = true;
        p.launches.push_back(std::move(l));
      }
    }
  }
  return p;
}

Program broadcast_pieces_program(const std::vector<int>& gpus, const std::vector<std::uint64_t>& pieces,
                                 Framework framework, bool thread_per_gpu) {
  return broadcast_pieces_program(std::vector<std::vector<int>>{gpus}, pieces, framework, thread_per_gpu);
}

Program copy_engine_program(const std::vector<std::vector<int>>& groups,
                            const std::vector<std::uint64_t>& tensors, int streams) {
  if (streams < 1 || streams > 64) throw UsageError("--streams must be between 1 and 64");
  if (tensors.empty()) throw UsageError("nothing to copy");
  Program p;
  for (const auto& g : groups) {
    if (g.size() < 2) throw UsageError("--to names no rollout GPU");
    p.comms.push_back({g});
  }
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    for (std::size_t t = 0; t < groups.size(); ++t) {
      const int from = groups[t][0];
      for (std::size_t i = 1; i < groups[t].size(); ++i) {
        KernelSpec c;
        c.gpu = groups[t][i];
        c.stream = static_cast<int>(k % static_cast<std::size_t>(streams));
        c.ops.push_back({OpSpec::Kind::Copy, from, tensors[k]});
        c.name = "cudaMemcpyPeerAsync";
        p.launches.push_back({static_cast<int>(t), {std::move(c)}, 0});  // each trainer's engine submits
      }
    }
  }
  return p;
}

Program copy_engine_program(int from, const std::vector<int>& to, const std::vector<std::uint64_t>& tensors,
                            int streams) {
  if (to.empty()) throw UsageError("--to names no rollout GPU");
  if (std::find(to.begin(), to.end(), from) != to.end())
    throw UsageError("--to lists the trainer GPU " + std::to_string(from) + " itself");
  return copy_engine_program(rollout_groups({from}, to), tensors, streams);
}

Program grad_sync_program(const std::vector<int>& gpus, const std::vector<std::uint64_t>& buckets,
                          Framework framework) {
  if (gpus.size() < 2) throw UsageError("gradient sync needs at least 2 GPUs");
  if (buckets.empty()) throw UsageError("no gradient buckets");
  Program p;
  p.comms.push_back({gpus});
  for (std::uint64_t b : buckets) per_rank_collectives(p, gpus, models::CollOp::AllReduce, b, 0, framework);
  return p;
}

}  // namespace commsim::sim
