// NCCL's collective algorithm/protocol choice (its tuner) and the ring/tree data flows a collective makes.
#pragma once

#include <span>

#include "commsim/models/nccl_env.hpp"
#include "commsim/models/params.hpp"
#include "commsim/models/transfer.hpp"

namespace commsim::models {

/// The plan NCCL 2.28 makes for one collective: tuner choice of algorithm and protocol (or NCCL_ALGO /
/// NCCL_PROTO), channel count for the size, per-step latencies and one flow per ring or tree edge.
CollectivePlan nccl_collective_plan(const ModelParams& p, const NcclEnv& env, CollOp op, std::uint64_t bytes,
                                    int root, const CommInfo& comm, std::span<const int> rank_node,
                                    std::span<const int> rank_nic);

/// The same flows with no latency, no protocol overhead and no per-channel cap: the ideal model's plan.
CollectivePlan ideal_collective_plan(CollOp op, std::uint64_t bytes, int root, const CommInfo& comm,
                                     std::span<const int> rank_node, std::span<const int> rank_nic);

}  // namespace commsim::models
