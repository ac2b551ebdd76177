// Megatron-LM's pipeline schedules as a list of steps per rank, shared by the simulator and commsim-measure.
#pragma once

#include <vector>

namespace commsim::workloads {

/// One step of a rank's schedule: a forward or backward compute of one (virtual) microbatch, or one call of
/// Megatron's p2p_communication._communicate with the directions it carries.
struct PipelineStep {
  enum class Kind { Forward, Backward, Communicate };
  Kind kind = Kind::Forward;
  bool send_next = false;  ///< activations to the next stage
  bool send_prev = false;  ///< gradients to the previous stage
  bool recv_prev = false;  ///< activations from the previous stage
  bool recv_next = false;  ///< gradients from the next stage
};

/// Rank `rank`'s steps in one training step of `stages` stages and `microbatches` microbatches:
/// forward_backward_pipelining_without_interleaving when chunks == 1, _with_interleaving (virtual stages,
/// neighbours wrapping around: the last stage feeds the first stage's next chunk) when chunks > 1. Throws
/// UsageError for fewer than 2 stages, no microbatches, a rank outside the stages, or an interleaved schedule
/// whose microbatches are not a multiple of the stages.
std::vector<PipelineStep> megatron_steps(int stages, int rank, int microbatches, int chunks = 1);

}  // namespace commsim::workloads
