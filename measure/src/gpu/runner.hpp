// Runs measurement configurations on the GPUs of this process: NCCL communicators, buffers, streams, timing.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "commsim/measure/plan.hpp"
#include "commsim/measure/results.hpp"
#include "measure_workload.hpp"
#include "workers.hpp"
#include "world.hpp"

namespace commsim::measure {

struct RunnerOptions {
  int warmup = 5;                     ///< untimed iterations before the timed ones, per repetition
  int iterations = 20;                ///< timed iterations per repetition
  Timing timing = Timing::Pipelined;  ///< how a repetition is timed (--timing)
  bool persistent_threads =
      true;  ///< thread per GPU: the same threads for the whole run (false: new per repetition)
  bool nccl_mem_alloc = true;  ///< buffers from ncclMemAlloc, as nccl-tests (false: cudaMalloc)
  bool nvlink_centric_sched =
      true;                    ///< ncclConfig_t::nvlinkCentricSched = 1, as nccl-tests sets it (NCCL >= 2.28)
  double timeout_s = 60;       ///< watchdog: a repetition taking longer is aborted and reported as failed
  bool single_thread = false;  ///< --launch single-thread: one host thread drives every GPU (nccl-tests -g N)
  std::uint64_t max_bytes = 0;  ///< buffer size per GPU and direction
  /// Shift the buffers by the size every iteration, as nccl-tests' startColl does ("avoid cache effects"):
  /// iteration i uses offset bytes * (i % (max_bytes / bytes)) of the send and receive buffers
  /// (--rotate-buffers)
  bool rotate_buffers = true;
  /// Single-thread launch: cudaSetDevice before each GPU's NCCL calls (--select-device per-call); nccl-tests
  /// never does (NCCL switches devices itself), so the default is only where a kernel or event needs it
  bool select_device_per_call = false;
};

/// GPUs are named by their global index (the index in `Config::gpus`): the CUDA device index in the
/// thread launch, the MPI rank in the MPI launch, where each process drives one GPU.
class Runner {
 public:
  /// `cuda_of[g]` is the CUDA device of global GPU g when this process drives it, -1 otherwise.
  Runner(const World& world, std::vector<int> cuda_of, const RunnerOptions& options);
  ~Runner();
  /// One repetition of `c`: warmup + timed iterations, timed as RunnerOptions::timing says. Collective over
  /// the World: every process calls it for every configuration; the combined Sample is complete on rank 0.
  Sample run(const Config& c, int rep);

 private:
  std::vector<ncclComm_t>& comms(const std::vector<int>& gpus, int slot);
  void drop_comms(const std::vector<int>& gpus);
  /// Issues one iteration of `c` by workload `w` for rank `r` (device c.gpus[r]); both streams end joined
  /// into stream 0.
  void issue(const MeasureWorkload& w, const Config& c, int r, const std::vector<ncclComm_t>& comm0,
             const std::vector<ncclComm_t>* comm1, bool record = false, std::uint64_t shift = 0);

  const World& world_;
  RunnerOptions o_;
  std::vector<MeasureDevice> dev_;
  std::map<std::pair<std::vector<int>, int>, std::vector<ncclComm_t>> comms_;
  std::unique_ptr<WorkerPool> workers_;  ///< thread-per-GPU launch: one persistent thread per GPU
};

}  // namespace commsim::measure
