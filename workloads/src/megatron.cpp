// Megatron-LM's 1F1B and interleaved 1F1B schedules, step by step (forward_backward_pipelining_*).
#include "commsim/workloads/megatron.hpp"

#include <algorithm>
#include <string>

#include "commsim/core/error.hpp"

namespace commsim::workloads {
namespace {

using Kind = PipelineStep::Kind;

PipelineStep comm(bool send_next, bool send_prev, bool recv_prev, bool recv_next) {
  return {Kind::Communicate, send_next, send_prev, recv_prev, recv_next};
}

void add_comm(std::vector<PipelineStep>& out, bool send_next, bool send_prev, bool recv_prev,
              bool recv_next) {
  if (send_next || send_prev || recv_prev || recv_next)
    out.push_back(comm(send_next, send_prev, recv_prev, recv_next));
}

std::vector<PipelineStep> one_f_one_b(int P, int r, int M) {
  std::vector<PipelineStep> out;
  const bool first = r == 0, last = r == P - 1;
  const int warmup = std::min(P - r - 1, M);
  const int remaining = M - warmup;
  for (int i = 0; i < warmup; ++i) {
    add_comm(out, false, false, !first, false);  // recv_forward
    out.push_back({Kind::Forward});
    add_comm(out, !last, false, false, false);  // send_forward
  }
  if (remaining > 0) add_comm(out, false, false, !first, false);
  for (int i = 0; i < remaining; ++i) {
    out.push_back({Kind::Forward});
    add_comm(out, !last, false, false, !last);  // send_forward_recv_backward
    out.push_back({Kind::Backward});
    if (i == remaining - 1) {
      add_comm(out, false, !first, false, false);  // send_backward
    } else {
      add_comm(out, false, !first, !first, false);  // send_backward_recv_forward
    }
  }
  for (int i = 0; i < warmup; ++i) {
    add_comm(out, false, false, false, !last);  // recv_backward
    out.push_back({Kind::Backward});
    add_comm(out, false, !first, false, false);  // send_backward
  }
  return out;
}

std::vector<PipelineStep> interleaved(int P, int r, int M, int V) {
  std::vector<PipelineStep> out;
  const int total = M * V;
  const bool first = r == 0, last = r == P - 1;
  auto chunk = [&](int k, bool forward) {
    const int in_group = ((k % (P * V)) + P * V) % (P * V);  // Python's modulo: k may be negative
    const int id = in_group / P;
    return forward ? id : V - id - 1;
  };
  const bool all_warmup = M == P;
  const int warmup = all_warmup ? total : std::min((P - r - 1) * 2 + (V - 1) * P, total);
  const int remaining = total - warmup;
  // The first virtual stage (rank 0, chunk 0) has no input; the last (rank P-1, chunk V-1) sends no output.
  add_comm(out, false, false, !first, false);  // recv_forward for virtual microbatch 0
  for (int k = 0; k < warmup; ++k) {
    out.push_back({Kind::Forward});
    const bool send_out = !(last && chunk(k, true) == V - 1);
    bool recv_prev = !(first && chunk(k + 1, true) == 0);
    if (k == total - 1) recv_prev = false;
    const bool recv_next = k == warmup - 1 && !all_warmup && !last;
    add_comm(out, send_out, false, recv_prev, recv_next);  // send_forward(_backward)_recv_forward(_backward)
  }
  for (int k = 0; k < remaining; ++k) {
    const int fk = k + warmup, bk = k;
    out.push_back({Kind::Forward});
    out.push_back({Kind::Backward});
    const bool send_out = !(last && chunk(fk, true) == V - 1);
    const bool send_grad = !(first && chunk(bk, false) == 0);
    bool recv_prev = !(first && chunk(fk - (P - 1), true) == V - 1);
    const bool recv_next = !(last && chunk(bk - (P - 1), false) == 0);
    if (k == remaining - 1) recv_prev = false;
    add_comm(out, send_out, send_grad, recv_prev, recv_next);  // send_forward_backward_recv_forward_backward
  }
  if (all_warmup) add_comm(out, false, false, false, !last);  // recv_backward
  for (int k = remaining; k < total; ++k) {
    out.push_back({Kind::Backward});
    const bool send_grad = !(first && chunk(k, false) == 0);
    bool recv_next = !(last && chunk(k + 1, false) == V - 1);
    if (k == total - 1) recv_next = false;
    add_comm(out, false, send_grad, false, recv_next);  // send_backward_recv_backward
  }
  return out;
}

}  // namespace

std::vector<PipelineStep> megatron_steps(int stages, int rank, int microbatches, int chunks) {
  if (stages < 2)
    throw UsageError("a pipeline needs at least 2 stages (GPUs); got " + std::to_string(stages));
  if (rank < 0 || rank >= stages) throw UsageError("rank " + std::to_string(rank) + " is not a stage");
  if (microbatches < 1) throw UsageError("--microbatches must be at least 1");
  if (chunks < 1 || chunks > 64) throw UsageError("--chunks must be between 1 and 64");
  if (chunks == 1) return one_f_one_b(stages, rank, microbatches);
  if (microbatches % stages != 0) {
    throw UsageError("the interleaved schedule needs --microbatches to be a multiple of the stages (" +
                     std::to_string(stages) + "); got " + std::to_string(microbatches));
  }
  return interleaved(stages, rank, microbatches, chunks);
}

}  // namespace commsim::workloads
