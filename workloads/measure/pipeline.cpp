// pipeline on commsim-measure's side: one Megatron pipeline step (1F1B or interleaved) for one stage, with
// emulated compute and the configuration's P2P mode.
#include <cstdint>

#include "commsim/workloads/megatron.hpp"
#include "gpu/check.hpp"
#include "gpu/kernels.hpp"
#include "gpu/measure_workload.hpp"

namespace commsim::measure {
namespace {

/// One step for stage `ctx.rank`: Megatron's schedule for that stage, activations received at recv and
/// gradients at recv + bytes (the Runner's receive buffers hold twice the largest size for pipelines).
void issue(IssueContext& ctx) {
  const Config& c = ctx.config;
  const int r = ctx.rank;
  const int n = ctx.ranks();
  const bool record = ctx.record;
  MeasureDevice& dv = ctx.device;
  cudaStream_t s0 = dv.stream[0];
  const std::size_t bytes = c.bytes;
  char* act = static_cast<char*>(dv.send);
  char* in_prev = static_cast<char*>(dv.recv);          // activation from the previous stage
  char* in_next = static_cast<char*>(dv.recv) + bytes;  // gradient from the next stage
  // Interleaved schedules wrap around: the last stage feeds the first stage's next model chunk.
  const int prev = r > 0 ? r - 1 : (c.chunks > 1 ? n - 1 : -1);
  const int next = r + 1 < n ? r + 1 : (c.chunks > 1 ? 0 : -1);
  const auto fwd_ns = static_cast<std::uint64_t>(c.fwd_us * 1000.0 / c.chunks);
  const auto bwd_ns = static_cast<std::uint64_t>(c.bwd_us * 1000.0 / c.chunks);
  // Megatron's _communicate: which of send_next, send_prev, recv_prev, recv_next this exchange has.
  auto communicate = [&](bool send_next, bool send_prev, bool recv_prev, bool recv_next) {
    if (c.mode == "batched") {  // one batch_isend_irecv: one group, Megatron's op order
      COMMSIM_NCCL_CHECK(ncclGroupStart());
      if (send_prev) COMMSIM_NCCL_CHECK(ncclSend(act, bytes, ncclInt8, prev, ctx.comm, s0));
      if (recv_prev) COMMSIM_NCCL_CHECK(ncclRecv(in_prev, bytes, ncclInt8, prev, ctx.comm, s0));
      if (send_next) COMMSIM_NCCL_CHECK(ncclSend(act, bytes, ncclInt8, next, ctx.comm, s0));
      if (recv_next) COMMSIM_NCCL_CHECK(ncclRecv(in_next, bytes, ncclInt8, next, ctx.comm, s0));
      COMMSIM_NCCL_CHECK(ncclGroupEnd());
      return;
    }
    if (c.mode == "overlapped") {
      // Separate communicators and streams: activations (forward direction) on comm/stream 1, gradients
      // (backward direction) on comm1/stream 2; the compute stream waits for both.
      cudaStream_t sf = dv.stream[1], sb = dv.stream[2];
      COMMSIM_CUDA_CHECK(cudaEventRecord(dv.join, s0));
      COMMSIM_CUDA_CHECK(cudaStreamWaitEvent(sf, dv.join, 0));
      COMMSIM_CUDA_CHECK(cudaStreamWaitEvent(sb, dv.join, 0));
      if (send_next) COMMSIM_NCCL_CHECK(ncclSend(act, bytes, ncclInt8, next, ctx.comm, sf));
      if (recv_prev) COMMSIM_NCCL_CHECK(ncclRecv(in_prev, bytes, ncclInt8, prev, ctx.comm, sf));
      if (send_prev) COMMSIM_NCCL_CHECK(ncclSend(act, bytes, ncclInt8, prev, ctx.comm1, sb));
      if (recv_next) COMMSIM_NCCL_CHECK(ncclRecv(in_next, bytes, ncclInt8, next, ctx.comm1, sb));
      COMMSIM_CUDA_CHECK(cudaEventRecord(dv.join_fwd, sf));
      COMMSIM_CUDA_CHECK(cudaEventRecord(dv.join_bwd, sb));
      COMMSIM_CUDA_CHECK(cudaStreamWaitEvent(s0, dv.join_fwd, 0));
      COMMSIM_CUDA_CHECK(cudaStreamWaitEvent(s0, dv.join_bwd, 0));
      return;
    }
    // sequential: Megatron's even/odd order, one operation at a time on one stream and communicator.
    auto op = [&](bool is_send, char* buf, int peer) {
      if (is_send) {
        COMMSIM_NCCL_CHECK(ncclSend(buf, bytes, ncclInt8, peer, ctx.comm, s0));
      } else {
        COMMSIM_NCCL_CHECK(ncclRecv(buf, bytes, ncclInt8, peer, ctx.comm, s0));
      }
    };
    if (r % 2 == 0) {
      if (send_next) op(true, act, next);
      if (recv_prev) op(false, in_prev, prev);
      if (send_prev) op(true, act, prev);
      if (recv_next) op(false, in_next, next);
    } else {
      if (recv_prev) op(false, in_prev, prev);
      if (send_next) op(true, act, next);
      if (recv_next) op(false, in_next, next);
      if (send_prev) op(true, act, prev);
    }
  };
  // The schedule itself is the simulator's (workloads/src/megatron.cpp): the same steps, run for real.
  // When recording, every compute kernel gets an event before and after it on the compute stream.
  std::size_t next_event = 0;
  if (record) dv.step_kinds.clear();
  auto compute = [&](std::uint64_t ns, const char* kind) {
    if (record) {
      while (dv.step_events.size() < next_event + 2) {
        cudaEvent_t e;
        COMMSIM_CUDA_CHECK(cudaEventCreate(&e));
        dv.step_events.push_back(e);
      }
      COMMSIM_CUDA_CHECK(cudaEventRecord(dv.step_events[next_event++], s0));
    }
    launch_spin(s0, ns, 1);
    if (record) {
      COMMSIM_CUDA_CHECK(cudaEventRecord(dv.step_events[next_event++], s0));
      dv.step_kinds.emplace_back(kind);
    }
  };
  for (const workloads::PipelineStep& step : workloads::megatron_steps(n, r, c.microbatches, c.chunks)) {
    switch (step.kind) {
      case workloads::PipelineStep::Kind::Forward:
        compute(fwd_ns, "forward");
        break;
      case workloads::PipelineStep::Kind::Backward:
        compute(bwd_ns, "backward");
        break;
      case workloads::PipelineStep::Kind::Communicate:
        communicate(step.send_next, step.send_prev, step.recv_prev, step.recv_next);
        break;
    }
  }
}

/// Two receive buffers per stage: activations from the previous stage, gradients from the next.
std::size_t buffer_bytes(const Config& c) { return 2 * c.bytes; }

}  // namespace

const MeasureWorkload& measure_workload_pipeline() {
  static const MeasureWorkload w{"pipeline", &issue, &buffer_bytes};
  return w;
}

}  // namespace commsim::measure
