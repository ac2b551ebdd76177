// commsim-measure's side of a workload: the NCCL calls of one iteration on one GPU. One file per workload in
// workloads/measure/, found by the registry's names.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "commsim/measure/plan.hpp"

namespace commsim::measure {

/// One GPU that this process drives: its buffers, streams and events, owned by the Runner for the whole run.
struct MeasureDevice {
  int cuda = -1;         ///< CUDA device index; -1 when another process drives this GPU
  void* send = nullptr;  ///< send buffer, RunnerOptions::max_bytes bytes
  void* recv = nullptr;  ///< receive buffer, RunnerOptions::max_bytes bytes (pipelines: two halves)
  cudaStream_t stream[3] = {nullptr, nullptr, nullptr};  ///< compute/main, and two for separate communicators
  std::vector<cudaEvent_t> events;                       ///< timing events (the Runner's slots)
  cudaEvent_t join = nullptr;                            ///< joins stream 0 and the side streams
  cudaEvent_t join_fwd = nullptr;
  cudaEvent_t join_bwd = nullptr;
  /// Pipelines: events around each compute kernel of the recorded iteration (reused across repetitions).
  std::vector<cudaEvent_t> step_events;
  std::vector<std::string> step_kinds;  ///< "forward"/"backward" per pair of step events
};

/// What a workload's `issue` gets: one rank of one configuration, with that rank's GPU and communicators.
struct IssueContext {
  const Config& config;        ///< the configuration being measured (bytes, mode, root, pipeline shape)
  int rank = 0;                ///< this GPU's rank: its index in config.gpus
  MeasureDevice& device;       ///< config.gpus[rank]'s buffers, streams and events
  ncclComm_t comm = nullptr;   ///< this rank's communicator over config.gpus (stream 0's)
  ncclComm_t comm1 = nullptr;  ///< a second communicator over the same GPUs for mode overlapped, else nullptr
  bool record = false;         ///< record the compute kernels' events of this iteration (pipeline timelines)
  std::uint64_t shift =
      0;  ///< bytes into the buffers where this iteration's data starts (nccl-tests' rotation)

  /// The number of ranks (config.gpus.size()).
  int ranks() const { return static_cast<int>(config.gpus.size()); }
  /// The configuration's size in bytes (Config::bytes: nccl-tests' size column).
  std::size_t bytes() const { return config.bytes; }
  /// The root's rank (config.root is a GPU index): rooted collectives.
  int root_rank() const;
  /// The configuration's size in 4-byte floats (the collectives move floats, as nccl-tests).
  std::size_t floats() const { return config.bytes / 4; }
  /// This iteration's send buffer: the device's, `shift` bytes in.
  void* send() const { return static_cast<char*>(device.send) + shift; }
  /// This iteration's receive buffer: the device's, `shift` bytes in.
  void* recv() const { return static_cast<char*>(device.recv) + shift; }
  /// Stream 0 of this rank's GPU, where one-communicator workloads issue.
  cudaStream_t stream() const { return device.stream[0]; }
};

/// commsim-measure's side of one workload.
struct MeasureWorkload {
  std::string name;  ///< the registry's name
  /// Issues one iteration for one rank on its streams (every call through the check macros); the side streams
  /// end joined into stream 0.
  void (*issue)(IssueContext& ctx) = nullptr;
  /// Bytes each of a GPU's send and receive buffers needs for configuration `c` (nullptr: c.bytes).
  std::size_t (*buffer_bytes)(const Config& c) = nullptr;
};

/// Every workload commsim-measure runs (one per file in workloads/measure/), in the registry's measure order;
/// files the registry does not know (or does not mark measured) last.
const std::vector<const MeasureWorkload*>& measure_workloads();
/// The workload called `name`; GpuError naming the ones there are otherwise.
const MeasureWorkload& measure_workload(std::string_view name);
/// The startup self-check: every measured registry workload has exactly one file in workloads/measure/, and
/// every file names a measured registry workload. Throws std::logic_error (a bug in the build) otherwise.
void check_measure_workloads();

}  // namespace commsim::measure
