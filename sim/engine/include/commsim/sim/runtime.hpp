// Executes NCCL-style programs (groups of send/recv kernels on streams, issued by host threads) on a
// topology.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commsim/core/error.hpp"
#include "commsim/models/transfer.hpp"
#include "commsim/sim/event_queue.hpp"
#include "commsim/sim/flow_network.hpp"
#include "commsim/sim/trace.hpp"
#include "commsim/topo/topology.hpp"

namespace commsim::sim {

/// A schedule that cannot finish: an operation whose partner never comes. The message says who waits on what.
class SimulationError : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const override { return ExitCode::kInput; }
};

/// A run stopped from outside (RunHooks::cancel, e.g. Ctrl-C) before it finished. Runs that finished before
/// it keep their results; the message says how far this one got.
class Interrupted : public Error {
 public:
  using Error::Error;
  /// 130, as a shell reports a command ended by SIGINT.
  ExitCode exit_code() const override { return static_cast<ExitCode>(130); }
};

/// Where a run stands (RunHooks::progress).
struct RunProgress {
  Picoseconds now = 0;           ///< simulated time reached
  std::uint64_t events = 0;      ///< events run so far
  std::uint64_t flows = 0;       ///< flows started so far
  std::size_t active_flows = 0;  ///< flows moving now
  double wall_seconds = 0;       ///< since the run started
};

/// Hooks for long runs: a cancellation flag polled between events, and a progress callback called about
/// every `progress_interval_s` of wall time.
struct RunHooks {
  const std::atomic<bool>* cancel = nullptr;  ///< when it becomes true, run() throws Interrupted
  std::function<void(const RunProgress&)> progress;
  double progress_interval_s = 0.5;
};

struct OpSpec {
  /// Send and Recv pair up as NCCL send/recv. Copy is a copy-engine transfer (cudaMemcpyPeerAsync issued on
  /// the kernel's GPU) that pulls `bytes` from `peer`; it needs no partner. SelfCopy is NCCL's send to the
  /// kernel's own rank with its receive, out of place (`peer` is the kernel's GPU): the kernel's warps copy
  /// `bytes` inside the GPU, on the channels NCCL's schedule gives it.
  enum class Kind { Send, Recv, Copy, SelfCopy };
  Kind kind = Kind::Send;
  int peer = 0;  ///< global GPU index of the other side
  std::uint64_t bytes = 0;
};

/// One rank's part of an NCCL collective. Every rank of the communicator issues its part; the k-th
/// collective a GPU issues on a communicator meets the k-th of every other rank.
struct CollectiveSpec {
  models::CollOp op = models::CollOp::AllReduce;
  std::uint64_t bytes =
      0;         ///< nccl-tests' size column (all_gather: the gathered output; reduce_scatter: input)
  int root = 0;  ///< communicator rank (broadcast, reduce)
};

/// One kernel on one GPU and stream: the send/recv operations of one NCCL call or group, one rank's part of a
/// collective, a compute kernel (`compute` > 0), or a pure stream wait (nothing but `wait_streams`).
struct KernelSpec {
  int gpu = 0;
  int stream = 0;
  int comm = 0;
  std::vector<OpSpec> ops;
  std::string name;
  std::optional<CollectiveSpec> collective;
  Picoseconds compute = 0;        ///< a compute kernel's duration
  std::vector<int> wait_streams;  ///< cudaStreamWaitEvent: work issued earlier on these streams of this GPU
                                  ///< must finish before this kernel starts
  /// A collective issued by every rank of `comm` (`gpu` unused): the same as one such kernel per rank, in
  /// rank order, at this place of the launch. A 16,384-GPU weight push issues 12.6 M collective kernels;
  /// this way its program holds one per communicator and tensor.
  bool every_rank = false;
};

/// A send/recv kernel: `ops` on `gpu`'s `stream`, on communicator `comm`.
KernelSpec p2p_kernel(int gpu, int stream, int comm, std::vector<OpSpec> ops, std::string name);

/// What one host thread issues with one call (a plain ncclSend/ncclRecv, one ncclGroupEnd, a collective, a
/// compute kernel or a stream wait). Host time per launch comes from the model: NCCL's launch cost for
/// communication kernels, a kernel launch for compute, nothing for stream waits; plus `framework_calls` times
/// the framework's per-call overhead (PyTorch's c10d, for example).
struct LaunchSpec {
  int thread = 0;
  std::vector<KernelSpec> kernels;
  int framework_calls = 0;
  /// With one kernel of every rank (KernelSpec::every_rank) of a communicator: the same as one launch per
  /// rank r, in rank order, by host thread `thread + r`, each issuing rank r's kernel alone (one process per
  /// GPU, as a per-rank collective call is issued).
  bool thread_per_rank = false;
};

struct CommSpec {
  std::vector<int> gpus;  ///< global GPU indices, in rank order
};

/// One iteration of a workload, repeated `warmup + iterations` times back to back (as nccl-tests times them).
struct Program {
  std::vector<CommSpec> comms;
  std::vector<LaunchSpec> launches;  ///< per iteration, in issue order per thread
  int warmup = 1;
  int iterations = 3;
  /// The measured iterations run from one captured CUDA graph (nccl-tests -G, PyTorch CUDA graphs): no host
  /// launch cost per iteration, the graph's kernel gap, and a cross-GPU join where one thread drives several
  /// GPUs.
  bool cuda_graph = false;
  /// RunResult::per_iteration as nccl-tests and commsim-measure time a thread-per-GPU run: every host thread
  /// times its own GPUs, from the end of the warmup to its GPUs' last kernel, and the times are averaged over
  /// the threads (nccl-tests' default `-a 1`). false: to the last kernel of any GPU (with one thread, the
  /// same).
  bool mean_over_threads = false;
  /// Fill RunResult::busy's transfer times (the union of each GPU's transfer spans, kept as they come: about
  /// a tenth of a 16,384-GPU weight push). A workload that does not report them turns it off.
  bool transfer_busy = true;
};

/// How the first measured iteration moved one operation (40 bytes; RunOptions::op_records says how many a run
/// keeps).
struct OpRecord {
  int src = 0;
  int dst = 0;
  std::uint64_t bytes = 0;
  models::Transport transport = models::Transport::P2p;
  models::Protocol protocol = models::Protocol::Simple;
  int channels = 0;
  Picoseconds start = 0;
  Picoseconds end = 0;
};

/// How the first measured iteration ran one collective.
struct CollectiveRecord {
  models::CollOp op = models::CollOp::AllReduce;
  std::uint64_t bytes = 0;
  models::Algorithm algorithm = models::Algorithm::Ring;
  models::Protocol protocol = models::Protocol::Simple;
  int channels = 0;
  Picoseconds start = 0;  ///< every rank ready
  Picoseconds end = 0;
};

/// Time one GPU's streams spent on each kind of work in the measured iterations (summed over streams).
struct GpuBusy {
  Picoseconds compute = 0;   ///< compute kernels, start to end
  Picoseconds transfer = 0;  ///< time data of this GPU was moving (union of its transfers' intervals)
};

/// A compute kernel of the first measured iteration.
struct ComputeSpan {
  int gpu = 0;
  std::string name;
  Picoseconds start = 0;
  Picoseconds end = 0;
};

/// RunOptions::op_records: keep a record of every transfer.
inline constexpr std::size_t kAllOpRecords = static_cast<std::size_t>(-1);

/// What a run keeps beyond its timings.
struct RunOptions {
  /// How many transfers of the first measured iteration RunResult::ops records, the first ones to start: 0
  /// (none), 1 (what a table row reports), or kAllOpRecords (40 bytes a transfer: 40 MB for the million
  /// transfers of an all-to-all over 1,024 GPUs).
  std::size_t op_records = 0;
};

struct RunResult {
  Picoseconds per_iteration = 0;  ///< mean time per measured iteration (what nccl-tests reports)
  std::vector<Picoseconds> iteration_end;
  std::vector<Picoseconds> issue_end;  ///< per iteration, when the last host thread had issued all of it
  /// The first RunOptions::op_records transfers of the first measured iteration, in the order they started
  /// (none unless asked for).
  std::vector<OpRecord> ops;
  std::vector<CollectiveRecord> collectives;  ///< of the first measured iteration
  std::map<int, GpuBusy> busy;                ///< per GPU, over the measured iterations (transfer: if asked)
  std::vector<ComputeSpan> compute;           ///< compute kernels of the first measured iteration
  /// Per GPU, where the first measured iteration starts on stream 0 (the end of the warmup's last kernel
  /// there: where a CUDA event recorded between iterations would fire); 0 without warmup.
  std::map<int, Picoseconds> iteration_start;
  std::uint64_t events = 0;
  std::uint64_t flows = 0;
  std::uint64_t flow_classes = 0;    ///< weighted flows after coalescing identical ones
  std::uint64_t recomputations = 0;  ///< instants at which rates were re-solved
  std::uint64_t solved_flows = 0;    ///< weighted flows re-solved, summed over recomputations
  /// NCCL chunk steps the send/recv channel parts stood for, summed over the parts started: each part is one
  /// flow with an analytic per-step cost, where a chunk-level simulator would take an event per step.
  std::uint64_t chunk_steps = 0;
};

/// Binds a topology to a transfer model: link capacities, routes and pair facts are computed once and reused
/// by every run. Not thread-safe; use one per thread.
class Runtime {
 public:
  Runtime(const topo::Topology& topo, const models::TransferModel& model);
  ~Runtime();

  /// Runs `program`; with `trace`, records kernels, transfers and link utilisation of every iteration;
  /// `options` says which transfer records the result keeps.
  RunResult run(const Program& program, Trace* trace = nullptr, const RunOptions& options = {});

  /// Hooks for every later run (cancellation, progress).
  void set_hooks(RunHooks hooks) { hooks_ = std::move(hooks); }

  /// The model's view of a GPU pair.
  const models::PairInfo& pair(int src, int dst);
  const topo::Topology& topology() const { return topo_; }
  const models::TransferModel& model() const { return model_; }

 private:
  /// Resources of the route src -> (nearest vertex of `kind` on src's machine) -> dst; throws `none` if there
  /// is no such vertex. `via`, when given, receives that vertex.
  std::vector<int> via_nearest(int src, int dst, topo::VertexKind kind, const std::string& none,
                               topo::Vertex* via = nullptr);

  struct Impl;
  class Execution;  ///< one run of one program (runtime.cpp)
  RunHooks hooks_;
  const topo::Topology& topo_;
  const models::TransferModel& model_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace commsim::sim
