// Workloads beyond one message: collectives, Megatron pipeline schedules, RL weight sync and gradient sync.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "commsim/sim/runtime.hpp"
#include "commsim/sim/workloads.hpp"
#include "commsim/workloads/model_spec.hpp"

namespace commsim::sim {

/// How the framework above NCCL issues communication. nccl: plain NCCL calls on the streams and communicators
/// the workload asks for. torch: PyTorch's ProcessGroupNCCL: one NCCL stream per device and group that waits
/// for the compute stream, unbatched isend/irecv on a group of more than 2 ranks serialized on it, the
/// compute stream waiting for the NCCL stream on wait(), and a per-call overhead.
enum class Framework { Nccl, Torch };
Framework parse_framework(std::string_view name);
const char* framework_name(Framework f);

/// "all_reduce" -> CollOp; UsageError listing the valid names otherwise.
models::CollOp parse_coll_op(std::string_view name);

/// nccl-tests <op>_perf over `gpus` (rank order): one collective of `bytes` per rank per iteration, rooted at
/// communicator rank `root`. One host thread drives every GPU (nccl-tests -g N) unless `thread_per_gpu`.
Program collective_program(const std::vector<int>& gpus, models::CollOp op, std::uint64_t bytes, int root = 0,
                           bool thread_per_gpu = false, Framework framework = Framework::Nccl);

/// A Megatron-style pipeline step: rank r runs stage r on gpus[r].
struct PipelineSpec {
  std::vector<int> gpus;
  int microbatches = 0;
  std::uint64_t activation_bytes = 0;  ///< per microbatch, sent forward (activations) and back (gradients)
  Picoseconds fwd = 0;                 ///< forward compute per stage and microbatch
  Picoseconds bwd = 0;
  ExchangeMode mode = ExchangeMode::Batched;
  Framework framework = Framework::Nccl;
  int chunks =
      1;  ///< model chunks per stage: > 1 runs Megatron's interleaved schedule (fwd/bwd split evenly)
};

/// One training step's communication and emulated compute, as Megatron-LM issues it
/// (forward_backward_pipelining_without_interleaving, or _with_interleaving when chunks > 1, and
/// p2p_communication._communicate):
/// batched = one batch_isend_irecv per exchange; overlapped = isend/irecv with even/odd ordering on separate
/// streams (plain NCCL) or on the group's one NCCL stream (PyTorch, more than 2 ranks); sequential = the
/// same ordering, one operation at a time. Compute runs on stream 0 of each GPU. Throws UsageError for fewer
/// than 2 stages, no microbatches, or an interleaved schedule whose microbatches are not a multiple of the
/// stages (Megatron's requirement).
Program pipeline_program(const PipelineSpec& spec);

/// A pipeline step without communication (us): (microbatches + (stages - 1) / chunks) x (fwd + bwd),
/// Megatron's interleaved bound (1F1B at one chunk), `fwd_us` and `bwd_us` per stage and microbatch.
double pipeline_compute_bound_us(int stages, int microbatches, int chunks, double fwd_us, double bwd_us);

/// Tensors of a model split into pieces as a weight push or gradient sync sends them: per tensor
/// (bucket_bytes 0) or consecutive tensors coalesced up to bucket_bytes (a tensor larger than a bucket goes
/// alone). `reverse`: from the last tensor to the first (gradients become ready in backward order).
std::vector<std::uint64_t> tensor_pieces(const workloads::ModelSpec& spec, std::uint64_t bucket_bytes,
                                         bool reverse = false);

/// A trainer-to-rollout weight push over NCCL broadcast from gpus[0]: one broadcast per piece, issued by one
/// host thread as one group over every GPU (what commsim-measure and a single-process trainer do), or, under
/// `torch` or `thread_per_gpu` (GPUs on several machines), by one process per GPU.
Program broadcast_pieces_program(const std::vector<int>& gpus, const std::vector<std::uint64_t>& pieces,
                                 Framework framework = Framework::Nccl, bool thread_per_gpu = false);

/// Several trainers pushing at once: `groups[t]` is trainer t (first) and the rollout GPUs it serves. Each
/// group is its own communicator, driven by its own host thread (one trainer process each), so the pushes run
/// in parallel and meet only where they share links.
Program broadcast_pieces_program(const std::vector<std::vector<int>>& groups,
                                 const std::vector<std::uint64_t>& pieces,
                                 Framework framework = Framework::Nccl, bool thread_per_gpu = false);

/// Splits `rollouts` among `trainers`: group t is trainers[t] followed by its contiguous share of the
/// rollouts (shares differ by at most one GPU). Throws UsageError when a trainer is also a rollout GPU, is
/// listed twice, or there are fewer rollouts than trainers.
std::vector<std::vector<int>> rollout_groups(const std::vector<int>& trainers,
                                             const std::vector<int>& rollouts);

/// The copy-engine push from several trainers: every rollout GPU of group t pulls every tensor from
/// groups[t][0]; each trainer's engine submits from its own host thread.
Program copy_engine_program(const std::vector<std::vector<int>>& groups,
                            const std::vector<std::uint64_t>& tensors, int streams);

/// A P2P transfer engine's push: for every tensor and rollout GPU one cudaMemcpyPeerAsync pulling from
/// `from`, spread round-robin over `streams` copy streams per rollout GPU, submitted by one host thread.
Program copy_engine_program(int from, const std::vector<int>& to, const std::vector<std::uint64_t>& tensors,
                            int streams);

/// Data-parallel gradient sync: one all_reduce per gradient bucket over `gpus`, one process per GPU.
Program grad_sync_program(const std::vector<int>& gpus, const std::vector<std::uint64_t>& buckets,
                          Framework framework = Framework::Torch);

}  // namespace commsim::sim
