// Measurement planning (CPU only): configurations per workload, seeded order, repetitions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "commsim/workloads/registry.hpp"

namespace commsim::measure {

/// One measured configuration. `gpus` are device indices in rank order; `src`/`dst` are set for p2p.
struct Config {
  int id = 0;
  std::string workload;  ///< a measured workload's registry name (workloads::measured_workloads())
  int src = -1;
  int dst = -1;
  std::vector<int> gpus;
  std::uint64_t bytes = 0;  ///< nccl-tests' size column: per-rank send size (all_gather: total output size)
  std::string mode;         ///< exchange or pipeline P2P mode
  int root = 0;             ///< broadcast root (device index)
  int microbatches = 0;     ///< pipeline
  double fwd_us = 0;        ///< pipeline: emulated forward compute per stage and microbatch
  double bwd_us = 0;        ///< pipeline: emulated backward compute
  int chunks = 1;           ///< pipeline: model chunks per stage (> 1: Megatron's interleaved schedule)
  workloads::WorkloadArgs
      args{};  ///< the workload's own flags, for workload files that need more than the above

  /// "p2p_cfg0042_s0d1_sz1048576": the NVTX range name without the repetition suffix (its fields by the
  /// workload's family: source and destination, stages and chunks, or the GPU count).
  std::string tag() const;
};

struct PlanOptions {
  std::string workload = "p2p";  ///< a measured workload's registry name
  int gpu_count = 0;             ///< GPUs available (or --gpus N for a dry run)
  std::vector<int> gpus;         ///< --gpus LIST (all when empty)
  std::string pairs = "all";     ///< p2p: "all", or empty with src/dst
  int src = -1;
  int dst = -1;
  std::vector<int> pair;  ///< exchange
  std::string mode;       ///< exchange
  int root = 0;
  std::vector<std::uint64_t> sizes;  ///< message sizes; for pipeline, activation sizes
  std::vector<int> microbatches;     ///< pipeline
  std::vector<std::string> modes;    ///< pipeline P2P modes
  double fwd_us = 0, bwd_us = 0;     ///< pipeline
  int chunks = 1;                    ///< pipeline: > 1 for the interleaved schedule
  workloads::WorkloadArgs args{};    ///< the workload's own flags, copied into every configuration
  std::uint64_t seed = 42;
};

/// The configurations of a run in their canonical order (ids 0..n-1), planned by the workload's family.
/// Throws UsageError for impossible plans and for workloads commsim-measure does not run.
std::vector<Config> plan_configs(const PlanOptions& o);

/// The sizes (bytes) a collective over `ranks` GPUs can move, as nccl-tests sizes them: 4-byte floats for
/// every Collective-family workload and every one whose busbw is (n-1)/n, and for the latter (all_gather,
/// reduce_scatter, alltoall: the size is split into one piece per rank) a piece per rank that is a multiple
/// of 16 bytes, as nccl-tests' GetCollByteCount rounds it (nccl-tests prints 1073741808 for 1 GiB over 3
/// ranks and 2016 for 2 KiB); sizes that round to 0 are dropped, duplicates kept once. Other workloads (p2p,
/// sendrecv, exchange, pipeline) move bytes and keep every size.
std::vector<std::uint64_t> collective_sizes(const std::string& workload, std::vector<std::uint64_t> sizes,
                                            std::size_t ranks);

/// The order in which repetition `rep` runs the configurations: a Fisher-Yates shuffle driven by a 64-bit
/// SplitMix generator seeded with (seed, rep), so the same seed gives the same order on every machine.
std::vector<int> run_order(std::size_t count, std::uint64_t seed, int rep);

}  // namespace commsim::measure
