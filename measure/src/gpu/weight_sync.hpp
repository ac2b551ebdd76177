// The weight-sync workload: push a model's tensors from a trainer GPU to rollout GPUs, by NCCL broadcast or
// by a copy-engine P2P transfer engine, timing each phase under the names of the weight-sync seed document.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace commsim::measure {

struct WeightSyncOptions {
  std::string model;    ///< a name from workloads/specs/models.toml
  int from = 0;         ///< trainer GPU (the source)
  std::vector<int> to;  ///< rollout GPUs
  std::string method;   ///< broadcast | p2p-engine
  int streams = 4;      ///< p2p-engine: copy streams per rollout GPU
  std::uint64_t bucket_bytes =
      0;         ///< broadcast: coalesce consecutive tensors into buckets of at most this size
  int reps = 3;  ///< timed repetitions after one warmup
};

/// Runs the workload and returns {"metrics": [...per repetition...], "model": ..., ...}. Throws GpuError or
/// OutOfMemory (with the bytes needed) on failure.
nlohmann::json run_weight_sync(const WeightSyncOptions& o);

}  // namespace commsim::measure
